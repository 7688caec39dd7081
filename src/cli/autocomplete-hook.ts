import type {Hook} from '@oclif/core'
import {addDynamicLayer} from './completion-scripts.js'

/**
 * After `sluice autocomplete` (which has @oclif/plugin-autocomplete write its bash and zsh
 * scripts, with or without --refresh-cache) and its hidden `autocomplete create`: adds sluice's
 * dynamic layer to those scripts (src/cli/completion-scripts.ts), so completion offers runbook
 * names, run ids, scenarios and setups as well as commands and flags. A failure here leaves the
 * plugin's scripts as they were, which still complete commands and flags.
 */
const hook: Hook<'postrun'> = async function (options) {
  if (options.Command.id !== 'autocomplete' && options.Command.id !== 'autocomplete:create') return
  try {
    await addDynamicLayer(options.config.cacheDir, options.config.bin)
  } catch (error) {
    this.debug(`could not add the dynamic completion layer: ${(error as Error).message}`)
  }
}

export default hook
