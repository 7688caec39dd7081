import {toConfiguredId, type Hook} from '@oclif/core'
import {closest} from '../input/closest.js'
import {exitCodeOf} from './exit-codes.js'

/**
 * A mistyped command. On a terminal @oclif/plugin-not-found asks "Did you mean run?" and runs it.
 * Without one it prints no suggestion at all, so a script's log would never say what was meant:
 * there the suggestion is the error's one line. Either way a mistyped command is bad input.
 */
const commandNotFound: Hook.CommandNotFound = async function (options) {
  const badInput = exitCodeOf('bad-input')
  if (process.stdin.isTTY) {
    // The plugin is typed against its own copy of @oclif/core; the hook contract is the same.
    const ask = (await import('@oclif/plugin-not-found')).default as unknown as Hook.CommandNotFound
    try {
      return await ask.call(this, options)
    } catch (error) {
      // The plugin exits 127 when the suggestion is declined; sluice has one exit-code table.
      const oclif = (error as {oclif?: {exit?: number}}).oclif
      if (oclif?.exit === 127) oclif.exit = badInput
      throw error
    }
  }
  const {config} = options
  const visible = config.commands.filter((c) => !c.hidden).flatMap((c) => [c.id, ...c.aliases])
  const suggestion = closest(options.id, visible)
  const typed = toConfiguredId(options.id, config)
  const hint = suggestion === undefined ? '' : ` did you mean ${toConfiguredId(suggestion, config)}?`
  process.stderr.write(`Error: ${typed} is not a ${config.bin} command;${hint} (${config.bin} help lists every command)\n`)
  this.exit(badInput)
}

export default commandNotFound
