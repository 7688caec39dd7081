import {ControlCommand, controlArgs, controlFlags, type ControlJson} from '../src/cli/control-command.js'

export default class Pause extends ControlCommand {
  static override summary = 'Hold a running live run at its next safe point, from any terminal.'

  static override description = `Writes a pause for the run to its state store (use the same --state, e.g. dynamodb://TABLE, to reach a run on another machine). The running process holds between ramp steps or cycle batches, stops counting a bake (its gate is still measured), keeps its locks and lease, and records who paused it in its journal. \`sluice promote RUN\` continues it. A run that is not running is refused (exit 4).`

  static override examples = ['<%= config.bin %> <%= command.id %> 20261130-054012-a1b2', '<%= config.bin %> <%= command.id %> 20261130-054012-a1b2 --state dynamodb://sluice-state --json']

  static override args = controlArgs

  static override flags = controlFlags

  protected readonly kind = 'pause' as const

  async run(): Promise<ControlJson> {
    const {args, flags} = await this.parse(Pause)
    return this.send(args, flags)
  }
}
