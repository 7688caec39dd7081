import {ControlCommand, controlArgs, controlFlags, type ControlJson} from '../src/cli/control-command.js'

export default class Promote extends ControlCommand {
  static override summary = 'Continue a paused live run, answer its waiting approval, or end its bake early.'

  static override description = `Writes a promote for the run to its state store. The running process continues if it is paused; otherwise it answers an approve step that is waiting, or ends the current bake early: the gate then passes as soon as it has passed the times in a row it needs, never before. A run that is not running is refused (exit 4).`

  static override examples = ['<%= config.bin %> <%= command.id %> 20261130-054012-a1b2']

  static override args = controlArgs

  static override flags = controlFlags

  protected readonly kind = 'promote' as const

  async run(): Promise<ControlJson> {
    const {args, flags} = await this.parse(Promote)
    return this.send(args, flags)
  }
}
