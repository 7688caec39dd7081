// Loaded with `node --import`: records every module URL the process resolves whose specifier names
// the AWS SDK, into the file named by SLUICE_MODULE_SPY, so tests can prove a path never loads it.
import {register} from 'node:module'

register('./module-spy-hooks.mjs', import.meta.url, {data: {file: process.env.SLUICE_MODULE_SPY}})
