import {Command, Help} from '@oclif/core'
import {exitCodeLines} from './exit-codes.js'

/** oclif's help, with the exit-code table under every command: scripts branch on those codes. */
export default class SluiceHelp extends Help {
  override formatCommand(command: Command.Loadable): string {
    const section = this.section('EXIT CODES', exitCodeLines().join('\n'))
    return `${super.formatCommand(flatUsage(command))}\n\n${section}`
  }
}

/**
 * The command with its flags' relations left out of the usage line. oclif's docopts groups flags
 * by dependsOn and exclusive, and garbles relations that overlap (calibrate's came out as
 * `[--until TIME |  | ]`, and --haproxy shown only with --haproxy-config); each flag's
 * description says its relations instead (src/cli/flag-relations.ts).
 */
function flatUsage(command: Command.Loadable): Command.Loadable {
  const flags = Object.fromEntries(
    Object.entries(command.flags).map(([name, flag]) => [name, {...flag, dependsOn: undefined, exclusive: undefined, combinable: undefined}]),
  )
  return {...command, flags}
}
