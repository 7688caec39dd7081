import {Command, Help} from '@oclif/core'
import {exitCodeLines} from './exit-codes.js'

/** oclif's help, with the exit-code table under every command: scripts branch on those codes. */
export default class SluiceHelp extends Help {
  override formatCommand(command: Command.Loadable): string {
    const section = this.section('EXIT CODES', exitCodeLines().join('\n'))
    return `${super.formatCommand(command)}\n\n${section}`
  }
}
