#!/usr/bin/env node
// oclif from the bundle the commands were built into (npm run build): one copy of it for both.
import {execute} from '../dist/bundle/src/cli/oclif.js'

await execute({dir: import.meta.url})
