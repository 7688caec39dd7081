import type {AwsOptions} from '../aws/clients.js'
import {runRunbook, type RunResult} from '../engine/engine.js'
import type {EngineIO} from '../engine/events.js'
import type {Runbook} from '../runbook/load.js'
import {liveControlPlane} from './control.js'
import {preflight} from './preflight.js'

export interface LiveOptions {
  aws: AwsOptions
  stateDir: string
  operator: string
  io: EngineIO
  signal: AbortSignal
}

/**
 * A live run: read everything first (an unknown resource or a missing permission stops here with
 * nothing changed), show the changes and ask (--yes answers; no terminal and no --yes refuses),
 * then run the same engine a rehearsal runs.
 */
export async function runLive(runbook: Runbook, options: LiveOptions): Promise<RunResult> {
  const {control, clients} = liveControlPlane(runbook, options.aws, {operator: options.operator, stateDir: options.stateDir})
  try {
    const plan = await preflight(runbook, control)
    // Steps that only touch sluice's own state (a freeze) or only read need no confirmation.
    const changesAws = runbook.steps.some((s) => ['ramp', 'cycle', 'restrict', 'lift'].includes(s.action))
    const yes = !changesAws || await options.io.confirm(`Apply ${runbook.name} to AWS${options.aws.region ? ` (${options.aws.region})` : ''}?`, plan)
    if (!yes) {
      const message = `${runbook.name}: not confirmed; nothing was changed`
      options.io.notify({type: 'run-end', outcome: 'refused', message})
      return {runbook: runbook.name, outcome: 'refused', exitCode: 4, message, steps: [], stoppedAt: null}
    }
    return await runRunbook(runbook, {control, io: options.io, signal: options.signal})
  } finally {
    clients.destroy()
  }
}
