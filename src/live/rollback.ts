import type {AwsOptions} from '../aws/clients.js'
import {rulesOf} from '../actions/registry.js'
import type {Drift} from '../actions/action.js'
import type {ControlPlane} from '../ports/control-plane.js'
import type {ControlSender} from '../ports/controls.js'
import type {EngineIO, GateVerdict, RunEvent} from '../ports/io.js'
import {journalLock, type JournalRead, type StateStore} from '../ports/state-store.js'
import {ControlPoller} from '../state/controls.js'
import {isOnWayBack, JournalWriter, mutations, pauseInForce, runStart, runStatus, thisHost} from '../state/journal.js'
import {releaseLeftLocks} from '../state/run-life.js'
import {liveAws, liveControlPlane, lockedResources} from '../wiring/live.js'
import {changesBySubject, describeDrift, driftBySubject} from '../way-back/history.js'
import {readForRecovery, runbookOf, settleUnknown} from './recovery.js'
import {failedPools} from '../way-back/step-back.js'
import {carryOut, planUndo} from '../way-back/undo-run.js'
import {callerLine, liveTarget, sameAccount} from './preflight.js'

export interface RollbackResult {
  runId: string
  undone: Array<{kind: string; resource: string; describe: string}>
  /** What it said it would do, a line per undo: how each goes back, in how many steps, behind what, onto which pool, and why. */
  plan: string[]
  /** What rollback did not touch, and why: net-zero changes, state a later run owns, state that is no longer the run's. */
  leftAlone: string[]
  /** held: a gate failed on the way back and nobody said go on; the rest is not undone. */
  outcome: 'rolled-back' | 'refused' | 'nothing' | 'held' | 'interrupted'
  message: string
  /** Where the world is not what the run left, when that refused the rollback (or, with --from-live, what it planned from). */
  drift?: string[]
}

export interface RollbackOptions {
  /** Undo weights in one change each, as before ramped rollbacks: for a receiving side known to hold. */
  now?: boolean
  /** Where what the run left has changed since, plan from what is there (weights) or leave it (the rest). */
  fromLive?: boolean
  /** Take weights back in steps that have no gate to judge them (none of the run's steps on those weights, nor on the receiving pool, has one). */
  ungated?: boolean
  signal?: AbortSignal
}

/**
 * Undoes what a run changed, as a run of its own: under the run's id and journal lock, with its
 * lease, its controls (`sluice pause|promote|abort RUN` from any terminal) and its journal
 * entries, from rollback-start to rollback-end. Per resource, only the net effect, newest first
 * (weights back to where the run found them, its restrictions lifted and any it lifted put back,
 * its freeze cleared, targets it left out of rotation returned). It reads the world first: a
 * change whose outcome was never recorded is settled from real state, what a later run changed is
 * left to that run, and anything else that is not as the run left it refuses the rollback (exit 4,
 * each difference named) unless `fromLive` plans from what is there. Weights go back as a ramp
 * onto the receiving pool, each step behind a gate (refused without one unless `ungated`;
 * `now`: at once). Shows the plan and asks first; a rollback that stopped partway goes on from
 * where it stopped, never forwards.
 */
export async function rollbackRun(
  store: StateStore,
  runId: string,
  aws: AwsOptions,
  io: EngineIO,
  operator: string,
  options: RollbackOptions = {},
): Promise<RollbackResult> {
  const read = await readForRecovery(store, runId, 'rollback')
  const notify = (message: string) => io.notify({type: 'warning', message})
  if (runStatus(read) === 'rolled-back') {
    await releaseLeftLocks(store, runId, {runId, operator, host: thisHost}, notify)
    return {runId, undone: [], plan: [], leftAlone: [], outcome: 'nothing', message: `run ${runId} was already rolled back`}
  }
  const start = runStart(read)
  const runbook = runbookOf(start)
  // The account first: a rollback with another account's credentials is refused before any lock or read.
  const settled = await liveAws(runbook, aws)
  const identity = await sameAccount(runId, runbook, settled, start.identity, options.signal)
  // The run's own journal lock too: while it rolls back nobody resumes or rolls it back beside it,
  // and `sluice journal` sees a live process on it.
  const resources = [...lockedResources(runbook), journalLock(runId)]
  await store.acquire(resources, {runId, operator, host: thisHost, since: new Date().toISOString()}, {notify})
  const journal = new JournalWriter(store, runId, (read.entries.at(-1)?.seq ?? 0) + 1)
  const stop = new AbortController()
  const forward = () => stop.abort()
  options.signal?.addEventListener('abort', forward, {once: true})
  if (options.signal?.aborted) stop.abort()
  const controls = new ControlPoller(
    store,
    runId,
    (c) => {
      notify(`abort by ${c.operator} on ${c.host} (sluice abort): stopping the rollback at the next safe point`)
      stop.abort()
    },
    notify,
    inheritedPause(read),
  )
  // What the way back does is recorded as a run's events are, so `sluice watch` draws it.
  const recording: EngineIO = Object.assign(Object.create(io) as EngineIO, {
    notify(event: RunEvent) {
      // What a control that finds nothing waiting is told the rollback is doing.
      if (event.type === 'progress') controls.doing(`the rollback is at ${event.message}`)
      if (event.type !== 'plan')
        void journal.record(event).catch((error: unknown) => io.notify({type: 'warning', message: `could not write the journal: ${(error as Error).message}`}))
      io.notify(event)
    },
  })
  controls.subscribe((control, effect, did) => recording.notify({type: 'control', control, effect, did}))
  const {control, clients} = liveControlPlane(runbook, aws, {operator, freeze: store.freeze, runId})
  try {
    await controls.start()
    const recorded = mutations(read)
    for (const finding of await settleUnknown(recorded, control, journal, 'rollback')) notify(`found on rollback: ${finding}`)
    const taken = recorded.filter((m) => m.outcome?.ok)
    // What another run has changed since is that run's to undo, never this one's.
    // The world is read once: what drifted is either another run's now, or this run's to refuse on.
    const driftedAll = await driftBySubject(taken, control)
    const owners = await ownersNow(store, runId, driftedAll, control)
    const own = taken.filter((m) => !owners.has(rulesOf(m).subject(m)))
    const laterLines = [...owners.values()].map((o) => o.line)
    const drifted = new Map([...driftedAll].filter(([subject]) => !owners.has(subject)))
    const drift = [...drifted.values()].map(describeDrift)
    if (drift.length > 0 && !options.fromLive) {
      await journal.write('drift', {found: drift, by: 'rollback', operator, host: thisHost})
      return refused(
        runId,
        laterLines,
        drift,
        `run ${runId}: what it left has changed since (${drift.join('; ')}), so rollback will not plan from its journal and move traffic on a guess. Nothing was changed. ` +
          `\`sluice rollback ${runId} --from-live\` plans from what is there now; \`sluice status --run ${runId}\` shows it`,
      )
    }
    const verdicts = read.entries.filter((e) => e.type === 'verdict').map((e) => e.verdict as GateVerdict)
    const {undos, leftAlone: alone} = await planUndo(own, runbook, control, {
      now: options.now ?? false,
      context: {failed: failedPools(runbook, verdicts)},
      ...(options.fromLive ? {fromLive: drifted} : {}),
    })
    const leftAlone = [...laterLines, ...alone]
    if (undos.length === 0) {
      // Nothing is left to undo (the run changed nothing that lasts, or a rollback killed after its
      // last change got it all back): the run is rolled back, and says so, so nothing resumes it forwards.
      const message = `run ${runId} changed nothing that needs undoing${isOnWayBack(read) ? ' any more' : ''}`
      await journal.write('rollback-start', {operator, host: thisHost, pid: process.pid, undo: [], leftAlone, ...(isOnWayBack(read) ? {continues: true} : {})})
      await journal.write('rollback-end', {outcome: 'rolled-back', message})
      return {runId, undone: [], plan: [], leftAlone, outcome: 'nothing', message}
    }
    const ungated = undos.filter((u) => u.stepped && !u.stepped.gate)
    if (ungated.length > 0 && !options.ungated)
      return refused(
        runId,
        leftAlone,
        [],
        `rollback of run ${runId} would move traffic back with no gate to judge it: ${ungated.map((u) => `${u.undo.describe} (${u.stepped!.gateFrom})`).join('; ')}. ` +
          `Nothing was changed. Add a gate on the receiving pool to the runbook, or take it back knowingly: --ungated (held steps, no verdicts) or --now (at once)`,
      )
    const lines = undos.map((u) => u.line)
    // The account in the question; where the calls go in full (region, any endpoint override) just above it.
    const yes = await io.confirm(`Roll back run ${runId} (${runbook.name})${identity ? ` in AWS account ${identity.account}` : ''}?`, [
      `on ${liveTarget(runbook, settled, identity)}`,
      ...callerLine(identity),
      'This will:',
      ...lines,
      ...leftAlone.map((why) => `left alone: ${why}`),
      ...(options.fromLive && drift.length > 0 ? drift.map((d) => `planned from what is there now (--from-live): ${d}`) : []),
    ])
    if (!yes) return {runId, undone: [], plan: lines, leftAlone, outcome: 'refused', message: `rollback of run ${runId} not confirmed; nothing was changed`}
    const continues = isOnWayBack(read)
    await journal.write('rollback-start', {
      operator,
      host: thisHost,
      pid: process.pid,
      undo: lines,
      leftAlone,
      ...(continues ? {continues: true} : {}),
      ...(options.now ? {now: true} : {}),
      ...(options.fromLive ? {fromLive: drift} : {}),
    })
    controls.doing('the rollback is starting')
    // Each change carries the run's clock, as the engine's do: `sluice watch` shows it when it was made.
    const record = {
      write: (type: string, data: Record<string, unknown>) => journal.write(type, type === 'mutation' ? {...data, clock: control.clock.now()} : data),
    }
    const done = await carryOut(undos, {control, record, io: recording, signal: stop.signal, controls})
    const undone = done.undone.map(({kind, resource, describe}) => ({kind, resource, describe}))
    if (done.outcome !== 'done') {
      await journal.write('rollback-end', {outcome: done.outcome, message: done.message, ...(done.at ? {weights: done.at} : {})})
      return {
        runId,
        undone,
        plan: lines,
        leftAlone,
        outcome: done.outcome,
        message: `rollback of run ${runId} ${done.outcome === 'held' ? 'held' : 'stopped'}: ${done.message}. \`sluice rollback ${runId}\` (or \`sluice resume ${runId}\`) goes on from here${done.at ? '; --now moves the rest at once' : ''}`,
      }
    }
    await journal.write('rollback-end', {outcome: 'rolled-back', message: `${undos.length} change${undos.length === 1 ? '' : 's'} undone`})
    return {
      runId,
      undone,
      plan: lines,
      leftAlone,
      outcome: 'rolled-back',
      message: `run ${runId} rolled back: ${undos.length} change${undos.length === 1 ? '' : 's'} undone`,
    }
  } finally {
    options.signal?.removeEventListener('abort', forward)
    await controls.stop()
    clients.destroy()
    await store.release(resources, runId)
  }
}

function refused(runId: string, leftAlone: string[], drift: string[], message: string): RollbackResult {
  return {runId, undone: [], plan: [], leftAlone, outcome: 'refused', message, ...(drift.length > 0 ? {drift} : {})}
}

/**
 * The pause a rollback goes on under: one sent to an earlier attempt of the way back that was
 * still in force when it stopped. A pause of the run forwards is not carried into its rollback:
 * the operator who asks for a rollback has decided.
 */
function inheritedPause(read: JournalRead): (ControlSender & {at: string}) | null {
  const first = read.entries.findIndex((e) => e.type === 'rollback-start')
  if (first < 0) return null
  return pauseInForce({entries: read.entries.slice(first), torn: null})
}

/**
 * Who owns what is there now, where it is not what this run left: another run whose journal says
 * it left exactly that (its own drift check finds none). Judged by the world, not by run ids or
 * clocks: an operator on another host, its clock minutes behind, starts a run whose id sorts
 * before this one's and changes things after it all the same. Newer ids are asked first.
 */
async function ownersNow(
  store: StateStore,
  runId: string,
  drifted: Map<string, Drift>,
  control: ControlPlane,
): Promise<Map<string, {runId: string; line: string}>> {
  const owners = new Map<string, {runId: string; line: string}>()
  if (drifted.size === 0) return owners
  for (const other of (await store.runIds())
    .filter((id) => id !== runId)
    .sort()
    .reverse()) {
    let read: JournalRead
    try {
      read = await store.read(other)
    } catch {
      continue
    }
    for (const changes of changesBySubject(mutations(read))) {
      const last = changes.at(-1)!
      const subject = rulesOf(last).subject(last)
      const drift = drifted.get(subject)
      if (!drift || owners.has(subject)) continue
      if ((await rulesOf(last).drift(changes, control)) !== null) continue
      owners.set(subject, {
        runId: other,
        line: `${drift.subject}: run ${other} (${runStart(read).runbookName}) has changed it since and left it as it is now (${drift.now}), so it is that run's to undo (\`sluice rollback ${other}\`)`,
      })
    }
    if (owners.size === drifted.size) break
  }
  return owners
}
