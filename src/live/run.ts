import {resolve} from 'node:path'
import type {ResumedMutation} from '../actions/action.js'
import {actionOf} from '../actions/registry.js'
import type {AwsOptions} from '../aws/clients.js'
import {runRunbook} from '../engine/engine.js'
import {newRunId} from '../ports/state-store.js'
import type {Runbook} from '../runbook/runbook.js'
import type {RunInputs, RunReport} from '../runner.js'
import {JournalWriter, sha256, thisHost} from '../state/journal.js'
import {openStore} from '../state/open.js'
import {liveControlPlane, lockedResources} from './control-plane.js'
import {preflight} from './preflight.js'

/** What a live run needs beyond what every run takes. */
export interface LiveSettings {
  aws: AwsOptions
  /** Where journals, locks and the freeze live (--state). */
  state?: string
  /** Break a dead run's locks before taking them. */
  breakLock?: string
  /** Continue an earlier run under its own id, from a step, with what that step had changed. */
  resume?: {runId: string; nextSeq: number; fromStep: number; mutations: ResumedMutation[]}
}

/**
 * A live run: lock the resources it changes (another run on any of them is refused), read
 * everything first (an unknown resource or a missing permission stops here with nothing changed),
 * show the changes and ask (--yes answers; no terminal and no --yes refuses), then run the same
 * engine a rehearsal runs, recording every event in the run's journal before it takes effect.
 */
export async function runLive(runbook: Runbook, inputs: RunInputs, settings: LiveSettings): Promise<RunReport> {
  const options = {...inputs, ...settings}
  const store = await openStore(settings.state, settings.aws)
  if (settings.breakLock) {
    const broken = await store.breakLocks(settings.breakLock)
    inputs.io.notify({type: 'warning', message: broken.length > 0 ? `broke ${broken.length} lock${broken.length === 1 ? '' : 's'} of run ${settings.breakLock}: ${broken.join(', ')}` : `run ${settings.breakLock} holds no locks in ${store.label}`})
  }
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
      return {mode: 'live', runId, rehearsal: null, run: {runbook: runbook.name, outcome: 'refused', message, steps: [], stoppedAt: null}}
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
    const run = await runRunbook(runbook, {
      control, io: options.io, signal: options.signal, journal: (event) => journal.record(event),
      ...(options.resume ? {resume: {fromStep: options.resume.fromStep, mutations: options.resume.mutations}} : {}),
    })
    return {mode: 'live', runId, rehearsal: null, run}
  } finally {
    clients.destroy()
    // A run that ends, however it ends, lets go of its locks; one that dies keeps them until it is
    // resumed or someone breaks them on purpose.
    await store.release(resources, runId)
  }
}
