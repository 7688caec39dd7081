/**
 * oclif's entry, as bin/run.js imports it: from the bundle (scripts/bundle.js), so the commands
 * and oclif share one copy of it, loaded from one file rather than hundreds.
 */
export {execute} from '@oclif/core'
