import {actionOf} from '../actions/registry.js'
import {resolve} from 'node:path'
import type {AwsOptions} from '../aws/clients.js'
import {runRunbook, type RunResult} from '../engine/engine.js'
import type {ResumedMutation} from '../actions/action.js'
import type {EngineIO} from '../ports/io.js'
import type {Runbook} from '../runbook/load.js'
import {JournalWriter, sha256, thisHost} from '../state/journal.js'
import {newRunId, type StateStore} from '../ports/state-store.js'
import {liveControlPlane, lockedResources} from './control-plane.js'
import {preflight} from './preflight.js'

export interface LiveOptions {
  aws: AwsOptions
  store: StateStore
  operator: string
  io: EngineIO
  signal: AbortSignal
  /** Continue an earlier run under its own id, from a step, with what that step had changed. */
  resume?: {runId: string; nextSeq: number; fromStep: number; mutations: ResumedMutation[]}
}

export type LiveResult = RunResult & {runId: string}

/**
 * A live run: lock the resources it changes (another run on any of them is refused), read
 * everything first (an unknown resource or a missing permission stops here with nothing changed),
 * show the changes and ask (--yes answers; no terminal and no --yes refuses), then run the same
 * engine a rehearsal runs, recording every event in the run's journal before it takes effect.
 */
export async function runLive(runbook: Runbook, options: LiveOptions): Promise<LiveResult> {
  const {store} = options
  const runId = options.resume?.runId ?? newRunId()
  const resources = lockedResources(runbook)
  await store.acquire(resources, {runId, operator: options.operator, host: thisHost, since: new Date().toISOString()})
  const {control, clients} = liveControlPlane(runbook, options.aws, {operator: options.operator, freeze: store.freeze})
  const journal = new JournalWriter(store, runId, options.resume?.nextSeq ?? 1)
  try {
    const plan = await preflight(runbook, control)
    // Steps that only touch sluice's own state (a freeze) or only read need no confirmation.
    const changesAws = runbook.steps.some((step) => actionOf(step).changesLive)
    const yes = !changesAws || (await options.io.confirm(`${options.resume ? 'Resume' : 'Apply'} ${runbook.name} on AWS${options.aws.region ? ` (${options.aws.region})` : ''}?`, plan))
    if (!yes) {
      const message = `${runbook.name}: not confirmed; nothing was changed`
      options.io.notify({type: 'run-end', outcome: 'refused', message})
      return {runId, runbook: runbook.name, outcome: 'refused', message, steps: [], stoppedAt: null}
    }
    if (options.resume) {
      await journal.write('resume', {operator: options.operator, host: thisHost, pid: process.pid, fromStep: options.resume.fromStep})
    } else {
      const {source} = runbook
      await journal.write('run-start', {
        runId, runbookName: runbook.name,
        runbookSha256: sha256(source.kind === 'file' ? source.text : JSON.stringify(source.input)),
        // A runbook file is named (and its hash checked on resume); one made from flags is kept whole.
        ...(source.kind === 'file' ? {runbookFile: resolve(runbook.file)} : {runbookInput: source.input}),
        operator: options.operator, host: thisHost, pid: process.pid,
        aws: {region: options.aws.region, profile: options.aws.profile, endpoint: options.aws.endpoint},
        resources,
      })
    }
    const result = await runRunbook(runbook, {
      control, io: options.io, signal: options.signal, journal: (event) => journal.record(event),
      ...(options.resume ? {resume: {fromStep: options.resume.fromStep, mutations: options.resume.mutations}} : {}),
    })
    return {...result, runId}
  } finally {
    clients.destroy()
    // A run that ends, however it ends, lets go of its locks; one that dies keeps them until it is
    // resumed or someone breaks them on purpose.
    await store.release(resources, runId)
  }
}
