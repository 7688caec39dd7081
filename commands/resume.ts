import {Args, Flags} from '@oclif/core'
import {SluiceCommand} from '../src/cli/base.js'
import {approveFlags, awsFlags, awsOptionsOf, lockFlags, runFlags, stateFlags} from '../src/cli/flags.js'
import {executeRunbook, operator, type RunJson} from '../src/cli/run-runbook.js'
import {openStateStore} from '../src/cli/state-store.js'
import type {RollbackResult} from '../src/live/rollback.js'

export default class Resume extends SluiceCommand {
  static override summary = 'Continue an interrupted or held live run from the first step that did not finish.'

  static override description = `A run that has started back (a rollback, or \`abort --rollback\`, that was killed or held) goes on with its rollback, never forwards. Otherwise it reads the run's journal, checks the runbook has not changed, reads the real state, and settles any change whose outcome was never recorded by comparing it with that state (never redoing it blindly). Then it reads back what every completed step left (weights, restrictions, registrations and drains, slow start and failover, the freeze) and compares it with the journal: anything changed since (a restart that reloaded HAProxy's maps, a person's hand) is drift, which stops the resume with nothing changed unless --reapply puts it back first. Then it continues under the same run id: a ramp goes on from the weights it finds, a cycle returns the batch it left out and goes on with the targets it had not cycled. A run that stopped while paused resumes paused. A journal whose last line was cut off is refused, with what to check.`

  static override examples = ['<%= config.bin %> <%= command.id %> 20261130-054012-a1b2 --yes']

  static override args = {
    run: Args.string({description: 'The run id (see `sluice journal`).', required: true}),
  }

  static override flags = {
    ...approveFlags,
    yes: runFlags.yes,
    ...awsFlags,
    ...stateFlags,
    'break-lock': lockFlags['break-lock'],
    reapply: Flags.boolean({
      description:
        'Where what the run left has changed since it stopped (drift: weights, restrictions, registrations, slow start, failover, its freeze), put back what its journal says before going on; shown in the plan and journalled. Without it, drift stops the resume (exit 4) with nothing changed.',
      default: false,
    }),
  }

  async run(): Promise<RunJson | {nothing: string} | RollbackResult> {
    const {args, flags} = await this.parse(Resume)
    const aws = awsOptionsOf(flags)
    const store = await openStateStore(flags.state, aws)
    const {planResume} = await import('../src/live/resume.js')
    const plan = await planResume(store, args.run, aws, operator(), (m) => this.progress(m), flags.reapply)
    if ('nothing' in plan) {
      this.log(plan.nothing)
      return plan
    }
    if ('wayBack' in plan) {
      this.progress(plan.wayBack)
      const {rollBackAtTerminal} = await import('../src/cli/roll-back.js')
      const options = {yes: flags.yes, now: false, fromLive: false, ungated: false, json: this.jsonEnabled()}
      return rollBackAtTerminal(store, args.run, aws, options, {log: (text) => this.log(text), endWith: (outcome) => this.endWith(outcome)})
    }
    for (const line of plan.settled) this.progress(`found on resume: ${line}`)
    this.progress(`resuming run ${args.run} (${plan.runbook.name}) at step ${plan.resume.fromStep + 1} of ${plan.runbook.steps.length}`)
    const mode = {kind: 'live' as const, aws, state: flags.state, breakLock: flags['break-lock'], resume: plan.resume}
    return executeRunbook(plan.runbook, mode, {yes: flags.yes, approve: flags.approve, json: this.jsonEnabled()}, this.printer())
  }
}
