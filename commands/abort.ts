import {ControlCommand, controlArgs, controlFlags, type ControlJson} from '../src/cli/control-command.js'

export default class Abort extends ControlCommand {
  static override summary = 'Stop a running live run at its next safe point, from any terminal.'

  static override description = `Writes an abort for the run to its state store. The running process stops as it does on Ctrl-C: at its next safe point, with a ramp put back to its last good weights and a cycle's batch back in service; it lets go of its locks and exits 130, and its journal says who aborted it. \`sluice resume RUN\` or \`sluice rollback RUN\` go on from there. A run that is not running is refused (exit 4).`

  static override examples = ['<%= config.bin %> <%= command.id %> 20261130-054012-a1b2']

  static override args = controlArgs

  static override flags = controlFlags

  protected readonly kind = 'abort' as const

  async run(): Promise<ControlJson> {
    const {args, flags} = await this.parse(Abort)
    return this.send(args, flags)
  }
}
