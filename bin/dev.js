#!/usr/bin/env node
// Runs the compiled commands like run.js, but with oclif's development settings
// (stack traces on errors, no manifest cache). Rebuild with `npm run build` first.
import {execute} from '../dist/bundle/src/cli/oclif.js'

await execute({development: true, dir: import.meta.url})
