import {Flags} from '@oclif/core'
import {ControlCommand, controlArgs, controlFlags, type ControlJson} from '../src/cli/control-command.js'

export default class Promote extends ControlCommand {
  static override summary = 'Continue a paused live run, answer its waiting approval, or end its bake early; --full ends every bake left.'

  static override description = `Writes a promote for the run to its state store. The running process continues if it is paused; otherwise it answers an approve step that is waiting, or ends the current bake early: the gate then passes as soon as it has passed the times in a row it needs, never before. A run that is not running is refused (exit 4).

With --full it does that and more: from then on every bake and wait of the run ends as soon as it starts, so a ramp goes through its remaining steps without waiting out a bake, one promote for all of them. Each gate is still judged (a step goes on only once its gate has passed the times in a row it needs, and a failing gate still stops the run), and an approve step still asks: Argo Rollouts' \`promote --full\` skips analysis and manual pauses too, but here a gate is the run's only measure of harm and an approve step is a question the runbook puts to a person at that point, which a promote sent earlier has not read.`

  static override examples = ['<%= config.bin %> <%= command.id %> 20261130-054012-a1b2', '<%= config.bin %> <%= command.id %> 20261130-054012-a1b2 --full']

  static override args = controlArgs

  static override flags = {
    ...controlFlags,
    full: Flags.boolean({
      description:
        'End the current bake and every later bake and wait at once; each gate is still judged (passing the times in a row it needs) and each approve step still asks.',
      default: false,
    }),
  }

  protected readonly kind = 'promote' as const

  async run(): Promise<ControlJson> {
    const {args, flags} = await this.parse(Promote)
    return this.send(args, flags, flags.full ? {full: true} : {})
  }
}
