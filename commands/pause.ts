import {ControlCommand, optionalRunArgs, controlFlags, type ControlJson} from '../src/cli/control-command.js'

export default class Pause extends ControlCommand {
  static override summary = 'Hold a running live run where it is, from any terminal; with no RUN, the one live run.'

  static override description = `Writes a pause for the run to its state store (the same store the run uses; dynamodb://TABLE reaches a run on another machine) and waits for the run to take it up, then says in which step. The running process holds in any step: a wait or bake stops counting (a gate is still measured), a cycle holds between batches, a ramp between steps, an approval stays unanswered. It keeps its locks and lease, and records who paused it in its journal, so a run that crashes while paused resumes paused. \`sluice promote RUN\` continues it. A run that has ended, or whose process is dead (judged by its pid on this host, else by its lease), is refused (exit 4). With no RUN it pauses the one live run in the store and says which on stderr; no live run, or several, is exit 2, naming them.`

  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    '<%= config.bin %> <%= command.id %> 20261130-054012-a1b2',
    '<%= config.bin %> <%= command.id %> 20261130-054012-a1b2 --state dynamodb://sluice-state --json',
  ]

  static override args = optionalRunArgs

  static override flags = controlFlags

  protected readonly kind = 'pause' as const

  async run(): Promise<ControlJson> {
    const {args, flags} = await this.parse(Pause)
    return this.send(args, flags)
  }
}
