import {resolve} from 'node:path'
import type {ResumedMutation} from '../actions/action.js'
import {actionOf} from '../actions/registry.js'
import type {AwsOptions} from '../aws/clients.js'
import {runRunbook} from '../engine/engine.js'
import type {Drift} from '../actions/action.js'
import {FailedError, InterruptedError, RefusedError} from '../errors.js'
import type {BaselineTaken, RecordedMutation} from '../ports/io.js'
import type {ControlPlane} from '../ports/control-plane.js'
import type {ControlSender} from '../ports/controls.js'
import {journalLock, LostLockError, newRunId, type StateStore} from '../ports/state-store.js'
import type {Runbook} from '../loader/runbook.js'
import type {RunResult} from '../engine/engine.js'
import type {RunInputs} from '../ports/run.js'
import {JournalWriter, operatorName, sha256, thisHost} from '../state/journal.js'
import {ControlPoller} from '../state/controls.js'
import {openStore} from '../wiring/state.js'
import {StateFileError} from '../state/records.js'
import {liveControlPlane, liveIdentity, lockedResources} from '../wiring/live.js'
import {callerLine, liveTarget, preflight} from './preflight.js'
import {checkPreviousRun} from './previous-run.js'
import {applyRecorded, describeDrift, findDrift} from '../way-back/history.js'

/** How a live run continues an earlier one (src/live/resume.ts plans it). */
export interface ResumeSettings {
  runId: string
  nextSeq: number
  fromStep: number
  /** What the step it resumes at had already changed. */
  mutations: ResumedMutation[]
  /** What that step's gate relative to before measured before its last change, if it did. */
  baseline?: BaselineTaken
  /** Every change the run recorded: what it left, for the drift check. */
  done: RecordedMutation[]
  /** The pause it stopped under, if any: it resumes paused. */
  paused: (ControlSender & {at: string}) | null
  /** Put back what the journal says the run left, where the world has drifted, before going on. */
  reapply: boolean
}

/** What a live run needs beyond what every run takes. */
/** A live run's report: the engine's result and the run id its journal is under. */
export interface LiveReport {
  mode: 'live'
  run: RunResult
  runId: string
  rehearsal: null
}

export interface LiveSettings {
  aws: AwsOptions
  /** Where journals, locks and the freeze live (--state). */
  state?: string
  /** Break one dead holder's lock, by its lock id (`sluice locks`), before taking the locks. */
  breakLock?: string
  /** Start afresh although the runbook's latest run never finished (its process must be dead). */
  newRun?: boolean
  /** Continue an earlier run under its own id, from a step, with what that step had changed. */
  resume?: ResumeSettings
  /** The id to run under, minted by the terminal that started this run detached (`--detach`), which printed it. */
  runId?: string
}

/**
 * A live run: write the run's first journal entry, then lock the resources it changes (another
 * live run on any of them is refused; a dead one's locks are taken once their lease runs out),
 * read everything first (an unknown resource or a missing permission stops here with nothing
 * changed), show the changes and ask (--yes answers; no terminal and no --yes refuses), then run
 * the same engine a rehearsal runs, recording every event in the run's journal before it takes
 * effect. If the journal cannot be written or a lock cannot be renewed, the run stops before its
 * next change, as failed, and says how to resume.
 */
export async function runLive(runbook: Runbook, inputs: RunInputs, settings: LiveSettings): Promise<LiveReport> {
  const options = {...inputs, ...settings}
  // Which account the run acts in, first: it is named in the journal and the confirmation, and
  // credentials that cannot say stop the run before it writes or reads anything.
  const identity = await liveIdentity(runbook, settings.aws, inputs.signal).catch((error: Error) => {
    if (inputs.signal.aborted) throw new InterruptedError(`${runbook.name}: interrupted while asking which AWS account it acts in; nothing was changed`)
    throw error
  })
  const store = await openStore(settings.state, settings.aws)
  const runId = options.resume?.runId ?? settings.runId ?? newRunId()
  const resources = lockedResources(runbook)
  const journal = new JournalWriter(store, runId, options.resume?.nextSeq ?? 1)
  const notify = (message: string) => inputs.io.notify({type: 'warning', message})
  const who = {runId, operator: options.operator, host: thisHost, since: new Date().toISOString()}
  if (!options.resume) {
    const supersedes = await checkPreviousRun(store, runbook.name, settings.newRun === true, notify)
    // The journal before any lock: a lock always has a journal that says whose it is.
    const {source} = runbook
    await journal.write('run-start', {
      ...(supersedes ? {supersedes} : {}),
      runId,
      runbookName: runbook.name,
      runbookSha256: sha256(source.kind === 'file' ? source.text : JSON.stringify(source.input)),
      // A runbook file is named (and its hash checked on resume); one made from flags is kept whole.
      ...(source.kind === 'file' ? {runbookFile: resolve(runbook.file)} : {runbookInput: source.input}),
      operator: options.operator,
      host: thisHost,
      pid: process.pid,
      aws: {region: options.aws.region, profile: options.aws.profile, endpoint: options.aws.endpoint},
      ...(identity ? {identity} : {}),
      resources,
    })
  }
  try {
    if (settings.breakLock) await breakLock(store, settings.breakLock, options, runId, journal, notify)
    await store.acquire([...resources, journalLock(runId)], who, {notify})
  } catch (error) {
    if (!options.resume) await journal.write('run-end', {outcome: 'refused', message: (error as Error).message}).catch(() => undefined)
    await store.release(resources, runId).catch(() => undefined)
    throw error
  }
  // Controls from any terminal (`sluice pause|promote|abort RUN`), polled from the store while the
  // run holds its locks. An abort stops the run as Ctrl-C does: at its next safe point, exit 130.
  const stop = new AbortController()
  const forward = () => stop.abort()
  inputs.signal.addEventListener('abort', forward, {once: true})
  if (inputs.signal.aborted) stop.abort()
  const controls = new ControlPoller(
    store,
    runId,
    (c) => {
      notify(`abort by ${c.operator} on ${c.host} (sluice abort): stopping at the next safe point`)
      stop.abort()
    },
    notify,
    options.resume?.paused ?? null,
  )
  const paused = options.resume?.paused
  if (paused)
    notify(
      `run ${runId} was paused by ${paused.operator} on ${paused.host} at ${paused.at} when it stopped: it resumes paused, holding before its next step until \`sluice promote ${runId}\` (or \`sluice abort ${runId}\`)`,
    )
  try {
    await controls.start()
  } catch (error) {
    await store.release(resources, runId).catch(() => undefined)
    throw error
  }
  const live = liveControlPlane(runbook, options.aws, {operator: options.operator, freeze: store.freeze, runId})
  const {clients} = live
  let stopped: Error | null = null
  const stoppedBy = (): Error | null => stopped ?? store.trouble(runId)
  // Before every call to AWS: the run's locks still its own (renewed first if this process was
  // stopped past half a lease). One lost is refused (exit 4), naming who holds it now.
  const control = guarded(live.control, async () => {
    const why = stopped ?? (await store.stillHolds(runId))
    if (!why) return
    throw why instanceof LostLockError ? new RefusedError(stopMessage(why, runId)) : new FailedError(stopMessage(why, runId))
  })
  try {
    // Ctrl-C while a read hangs stops here, before anything has changed.
    const read = await preflight(runbook, control, inputs.signal, options.resume?.fromStep).catch(async (error: Error) => {
      if (inputs.signal.aborted) return null
      // The journal says why the run ended, not just that it did not finish.
      if (!options.resume) await journal.write('run-end', {outcome: 'failed', message: `${error.message}; nothing was changed`}).catch(() => undefined)
      throw error
    })
    if (read === null) {
      const message = `${runbook.name}: interrupted while reading what it would change; nothing was changed`
      if (!options.resume) await journal.write('run-end', {outcome: 'interrupted', message})
      options.io.notify({type: 'run-end', outcome: 'interrupted', message})
      return {mode: 'live', runId, rehearsal: null, run: {runbook: runbook.name, outcome: 'interrupted', message, steps: [], stoppedAt: null}}
    }
    const drift = options.resume ? await checkDrift(options.resume, control, journal, notify) : []
    // The plan is shown before anything is asked, with or without a terminal, and with the run's
    // id so a second operator can watch it; the engine's own plan event later draws nothing new.
    options.io.notify({type: 'plan', runbook: runbook.name, steps: read.plan, runId})
    // Steps that only touch sluice's own state (a freeze) or only read need no confirmation.
    const changesAws = drift.length > 0 || runbook.steps.slice(options.resume?.fromStep ?? 0).some((step) => actionOf(step).changesLive)
    const on = liveTarget(runbook, options.aws, identity)
    const putBack = drift.flatMap((d) => d.reapply)
    const context = [
      'Now:',
      ...[...callerLine(identity), ...read.now].map((l) => `  ${l}`),
      ...(putBack.length ? ['First, put back what the run left (--reapply):', ...putBack.map((u) => `  ${u.describe}`)] : []),
    ]
    // A question nobody can answer (no terminal, no --yes) refuses: the journal says so, so the
    // run is not taken for one that died half-way.
    const yes =
      !changesAws ||
      (await options.io.confirm(`${options.resume ? 'Resume' : 'Apply'} ${runbook.name} on ${on}?`, context).catch(async (error: Error) => {
        if (!options.resume) await journal.write('run-end', {outcome: 'refused', message: `${error.message}; nothing was changed`}).catch(() => undefined)
        throw error
      }))
    if (!yes) {
      const message = `${runbook.name}: not confirmed; nothing was changed`
      if (!options.resume) await journal.write('run-end', {outcome: 'refused', message})
      options.io.notify({type: 'run-end', outcome: 'refused', message})
      return {mode: 'live', runId, rehearsal: null, run: {runbook: runbook.name, outcome: 'refused', message, steps: [], stoppedAt: null}}
    }
    if (options.resume)
      await journal.write('resume', {
        operator: options.operator,
        host: thisHost,
        pid: process.pid,
        fromStep: options.resume.fromStep,
        ...(putBack.length ? {reapply: putBack.map((u) => u.describe)} : {}),
      })
    for (const change of putBack) {
      await applyRecorded(journal, change)
      notify(`put back: ${change.describe}`)
    }
    const run = await runRunbook(runbook, {
      control,
      io: options.io,
      signal: stop.signal,
      controls,
      approved: options.approved,
      // The engine records each change's intent before making it. A journal that cannot be
      // written stops the run: the failure is kept (never thrown into the engine's queue, where
      // nobody may be waiting for it), and every later call on the control plane refuses.
      journal: async (event) => {
        if (stopped) return
        try {
          await journal.record(event)
        } catch (error) {
          stopped = error as Error
        }
      },
      ...(options.resume
        ? {
            resume: {
              fromStep: options.resume.fromStep,
              mutations: options.resume.mutations,
              ...(options.resume.baseline ? {baseline: options.resume.baseline} : {}),
            },
          }
        : {}),
    })
    const why = stoppedBy()
    if (why) {
      const message = stopMessage(why, runId)
      // A lock lost to another process is a refusal (exit 4): the run goes on there, not here.
      const outcome = why instanceof LostLockError ? 'refused' : 'failed'
      options.io.notify({type: 'run-end', outcome, message})
      return {
        mode: 'live',
        runId,
        rehearsal: null,
        run: {...run, outcome, message, stoppedAt: run.stoppedAt ?? {step: run.steps.length - 1, title: run.steps.at(-1)?.title ?? '', message}},
      }
    }
    return {mode: 'live', runId, rehearsal: null, run}
  } finally {
    inputs.signal.removeEventListener('abort', forward)
    await controls.stop()
    clients.destroy()
    // A run that ends, however it ends, lets go of its locks; one that dies keeps them until its
    // lease runs out. Letting go can fail too (a lock file sluice may no longer touch): said, not thrown.
    await store
      .release(resources, runId)
      .catch((error: unknown) => notify(`could not let go of every lock (each runs out ${LEASE_HINT}): ${(error as Error).message}`))
  }
}

const LEASE_HINT = 'by itself once its lease passes with no renewal'

/**
 * Reads back what the resumed run left and says what drifted (recorded in its journal). Drift
 * stops the resume (exit 4, nothing changed) unless --reapply asked to put it back first.
 */
async function checkDrift(resume: ResumeSettings, control: ControlPlane, journal: JournalWriter, notify: (m: string) => void): Promise<Drift[]> {
  const drift = await findDrift(resume.done, control)
  if (drift.length === 0) return []
  const lines = drift.map(describeDrift)
  await journal.write('drift', {found: lines, reapply: resume.reapply, operator: operatorName(), host: thisHost})
  for (const line of lines) notify(`drift since run ${resume.runId} stopped: ${line}`)
  if (!resume.reapply)
    throw new RefusedError(
      `run ${resume.runId}: what it left has changed since it stopped (${lines.join('; ')}), so it will not go on over it. Nothing was changed. ` +
        `\`sluice resume ${resume.runId} --reapply\` puts back what the journal says first (in its plan, journalled); \`sluice rollback ${resume.runId}\` undoes the run instead`,
    )
  return drift
}

/** Why a run stopped before its next change, and how to go on. */
function stopMessage(why: Error, runId: string): string {
  // Another process runs it now: there is nothing for this one to resume.
  if (why instanceof LostLockError)
    return `stopped before the next change: ${why.message}; \`sluice journal ${runId}\` shows what the run did and who runs it now`
  const full = (why instanceof StateFileError && (why.code === 'ENOSPC' || why.code === 'EDQUOT')) || /\((ENOSPC|EDQUOT)\)/.test(why.message)
  const fix = full ? 'free some space there' : 'fix that'
  return `stopped before the next change: ${why.message}. Nothing more was changed; ${fix}, then continue with \`sluice resume ${runId}\` (\`sluice journal ${runId}\` shows what was done)`
}

/** The control plane with every call refused once `check` throws: nothing changes after the run must stop. */
function guarded(control: ControlPlane, check: () => Promise<void>): ControlPlane {
  const wrap = <T extends object>(port: T): T =>
    new Proxy(port, {
      get(target, key) {
        const value: unknown = Reflect.get(target, key, target)
        if (typeof value !== 'function') return value
        return async (...args: unknown[]) => {
          await check()
          return (value as (...a: unknown[]) => unknown).apply(target, args)
        }
      },
    })
  return {
    ...control,
    ...(control.weights ? {weights: wrap(control.weights)} : {}),
    ...(control.restrictions ? {restrictions: wrap(control.restrictions)} : {}),
    ...(control.metrics ? {metrics: wrap(control.metrics)} : {}),
    pools: new Map([...control.pools].map(([pool, group]) => [pool, wrap(group)])),
    freeze: wrap(control.freeze),
    hooks: wrap(control.hooks),
  }
}

/**
 * --break-lock LOCK_ID, like `terraform force-unlock`: the lock's own id (shown by `sluice
 * locks`), refused while its holder renews its lease, asked first (--yes answers), and recorded in
 * the journal of the run whose lock it was.
 */
async function breakLock(
  store: StateStore,
  lockId: string,
  options: RunInputs & LiveSettings,
  runId: string,
  journal: JournalWriter,
  notify: (m: string) => void,
): Promise<void> {
  const broken = await store.breakLock(
    lockId,
    (lock) =>
      options.io.confirm(`Break lock ${lockId} on ${lock.resource}?`, [
        `lock ${lockId} on ${lock.resource}: run ${lock.runId} of ${lock.operator} on ${lock.host} (pid ${lock.pid}) since ${lock.since}, last heartbeat ${lock.heartbeat}`,
        `its lease (${lock.leaseSeconds} s) passed with no renewal while sluice watched; break it only if that process is dead`,
      ]),
    {notify},
  )
  const entry = {resource: broken.resource, lockId, brokenRunId: broken.runId, operator: options.operator, host: thisHost, pid: process.pid, byRun: runId}
  notify(`broke lock ${lockId} on ${broken.resource} (run ${broken.runId} of ${broken.operator} on ${broken.host})`)
  if (broken.runId === runId) {
    await journal.write('lock-broken', entry)
    return
  }
  // Recorded in the broken run's own journal, when there is one to record it in.
  try {
    const read = await store.read(broken.runId)
    await new JournalWriter(store, broken.runId, (read.entries.at(-1)?.seq ?? 0) + 1).write('lock-broken', entry)
  } catch (error) {
    notify(`could not record the broken lock in the journal of run ${broken.runId}: ${(error as Error).message}`)
  } finally {
    await store.release([], broken.runId).catch(() => undefined)
  }
}
