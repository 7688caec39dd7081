import {isIP} from 'node:net'
import type {ControlPlane, EcsReplaceSpec, HookResult, HookSpec, Target, PoolPort} from '../../ports/control-plane.js'
import type {Problem} from '../../input/problems.js'
import type {GateVerdict, Mutation, MutationKind, RecordedMutation} from '../../ports/io.js'
import {cycleSchema, type CycleHook, type CycleStep} from './schema.js'
import {batchBeyondPool, describeCount, resolveCount, type CountOrPercent} from '../../runbook/units.js'
import {backendOf} from '../../runbook/targets.js'
import type {RestartIamNeeds} from '../../ports/backend.js'
import {gateFailure, gatePlan, type ActionContext, type ChangeReport, type ActionDefinition, type MutationRules, type StepOutcome} from '../action.js'
import {largestBatch, roomLeft} from '../../pacing/batch.js'
import {roomText, rps, usable, waitSaidEvery} from '../../pacing/room.js'

/** Seconds between looks at the group while waiting for room in the disruption budget. */
const budgetPoll = 10

/**
 * Cycles a target group batch by batch: drain → restart → remediate → return (with slow start) →
 * gate. Never more than the disruption budget out of rotation at once, counting targets that were
 * already unhealthy, and never below the capacity headroom. A failed batch stops the cycle and is named.
 */
async function run(step: CycleStep, ctx: ActionContext): Promise<StepOutcome> {
  const group = ctx.control.pools.get(step.pool)
  if (!group) return {status: 'failed', message: `no target group for pool ${step.pool}`}
  const all = await group.targets()
  // Resuming: the batch the earlier run left out of rotation goes first, and targets it already
  // cycled are done.
  const pending = new Map<string, Target>()
  const done = new Set<string>()
  // The hooks the earlier run ran on a target (or was running when it died): never run twice.
  const ran: HooksRan = {restart: new Set(), remediate: new Set(), finishing: {restart: new Map(), remediate: new Map()}}
  for (const m of ctx.resumed ?? []) {
    if (!m.outcome?.ok) continue
    const hook = m.kind === 'replace' ? 'restart' : m.kind === 'restart' || m.kind === 'remediate' ? m.kind : undefined
    if (hook) {
      const id = m.kind === 'replace' ? (m.before as string[])[0] : (m.after as string)
      ran[hook].add(id)
      // Begun and never seen to end: the resumed run waits for it rather than doing it again.
      if (m.outcome.found) ran.finishing[hook].set(id, new Date(m.at ?? Date.now()))
      // A replaced task is gone for good: the service's new one serves in its place, and is new, so not cycled.
      else if (m.kind === 'replace') {
        pending.delete(id)
        done.add(id)
      }
      for (const replacement of m.outcome.produced ?? []) done.add(replacement)
    }
    // The group still lists a target it has taken out of rotation (HAProxy keeps it, draining):
    // its address from there; else from the id the journal recorded.
    if (m.kind === 'deregister') for (const id of m.before as string[]) pending.set(id, all.find((t) => t.id === id) ?? targetFromId(id))
    if (m.kind === 'register') {
      for (const id of m.after as string[]) {
        pending.delete(id)
        done.add(id)
      }
    }
  }
  // Batches are sized against the pool as it was when the cycle began: a batch the earlier run
  // left out is no longer in the group (ELBv2 forgets deregistered targets), but still in the pool.
  let size = new Set([...all.map((t) => t.id), ...pending.keys()]).size
  const listedAtStart = new Set(all.map((t) => t.id))
  if (size === 0 && !ctx.resumed) return {status: 'failed', message: `${group.label} has no targets`}
  const auto = step.batch === 'auto'
  const beyond = step.batch === 'auto' ? undefined : batchBeyondPool(step.batch, size)
  if (beyond) return {status: 'failed', message: `${group.label}: ${beyond}`}
  const batchSize = step.batch === 'auto' ? autoMost(step, size) : resolveCount(step.batch, size)
  const budget = step.budget ? resolveCount(step.budget, size) : batchSize
  if (!auto && batchSize > budget)
    return {
      status: 'failed',
      message: `a batch of ${describeBatch(step.batch)} (${batchSize} of ${size}) is larger than the disruption budget of ${describeCount(step.budget!)} (${budget})`,
    }

  if (step.failoverPercent !== undefined) {
    const before = await group.failoverPercent()
    if (before !== step.failoverPercent)
      await ctx.change('failover', group.label, before, step.failoverPercent, () => group.setFailoverPercent(step.failoverPercent!))
  }
  if (step.slowStart !== undefined) {
    const before = await group.slowStart()
    if (before !== step.slowStart) await ctx.change('slow-start', group.label, before, step.slowStart, () => group.setSlowStart(step.slowStart!))
  }

  let left = all.filter((t) => !done.has(t.id) && !pending.has(t.id))
  // An auto batch is sized before it is taken, so how many there will be is known only at the end.
  const count = auto ? null : (pending.size > 0 ? 1 : 0) + Math.ceil(left.length / batchSize)
  const total = pending.size + left.length
  const verdicts: GateVerdict[] = []
  let b = 0
  for (; count === null ? (b === 0 && pending.size > 0) || left.length > 0 : b < count; b++) {
    const name = count === null ? `batch ${b + 1}` : `batch ${b + 1} of ${count}`
    // A pause (`sluice pause`) holds here, between batches, with every earlier batch back in service.
    if (b > 0) await ctx.checkpoint(`before ${name}`)
    if (ctx.signal.aborted) return {status: 'interrupted', message: `stopped before ${name}; earlier batches are back in service`, verdicts}
    let batch: Target[]
    if (b === 0 && pending.size > 0) batch = [...pending.values()]
    else if (auto) {
      const sized = await autoBatch(step, ctx, group, left, name, batchSize, budget, size)
      if ('status' in sized) return {...sized, verdicts}
      batch = sized.batch
    } else batch = nextBatch(left, b === 0 ? all : await group.targets(), batchSize)
    left = left.filter((t) => !batch.includes(t))
    const fresh = new Set<string>()
    const outcome = await cycleBatch(step, ctx, group, batch, name, budget, size, verdicts, ran, fresh)
    // A replacement the service registered before this run began (finishing one a killed run began) is new: not cycled.
    left = left.filter((t) => !fresh.has(t.id))
    // And it was counted beside the task it replaced, which is gone: one place in the pool, not two.
    size -= [...fresh].filter((id) => listedAtStart.has(id)).length
    if (outcome) return outcome
  }
  return {
    status: 'done',
    message: `cycled ${total} targets in ${b} batches${ctx.resumed ? ` (after ${done.size} cycled before the resume)` : ''}`,
    verdicts,
  }
}

/** Without a budget, an auto batch takes at most half the pool: a restart that goes wrong takes no more. */
const autoMost = (step: CycleStep, size: number): number => (step.budget ? resolveCount(step.budget, size) : Math.max(1, Math.floor(size / 2)))

/** The most targets of a pool of `size` a cycle takes out of rotation at once: its budget, else its batch (an auto batch's most). */
export const mostOutAtOnce = (step: CycleStep, size: number): number =>
  step.batch === 'auto' ? autoMost(step, size) : resolveCount(step.budget ?? step.batch, size)

/**
 * The next auto batch: the largest the targets left in rotation can cover with the headroom kept,
 * read now (targets, their warm-up, the pool's demand). When not even one target can go, it waits
 * for room (targets warming, demand falling) up to healthyTimeout, then stops with the numbers.
 */
async function autoBatch(
  step: CycleStep,
  ctx: ActionContext,
  group: PoolPort,
  left: Target[],
  name: string,
  most: number,
  budget: number,
  size: number,
): Promise<{batch: Target[]} | StepOutcome> {
  const perTarget = step.capacityPerTarget!
  const headroomShare = (step.headroom ?? defaultAutoHeadroom) / 100
  const started = ctx.control.clock.now()
  const deadline = started + step.healthyTimeout
  let said = -Infinity
  for (;;) {
    const now = await group.targets()
    const inRotation = now.filter((t) => t.health === 'healthy')
    const {value: demand} = await ctx.metrics().read('request-rate', demandWindow, step.pool, ctx.signal)
    if (demand === null)
      return {status: 'held', message: `${name}: cannot size an auto batch: no request-rate data for ${step.pool} (missing data is never room)`}
    const sized = largestBatch(
      step.pool,
      nextBatch(left, now, left.length),
      inRotation,
      demand,
      perTarget,
      headroomShare,
      most,
      budget - (size - inRotation.length),
    )
    if (sized.batch.length > 0) {
      ctx.progress(`${name}: ${sized.why}`)
      return sized
    }
    if (ctx.control.clock.now() >= deadline)
      return {
        status: step.onFailure === 'hold' ? 'held' : 'failed',
        message: `${name}: no target can be taken out within ${step.healthyTimeout} s: ${sized.why}`,
      }
    // Said when the wait starts and once a minute after, not at every look.
    const waited = ctx.control.clock.now() - started
    if (waited - said >= waitSaidEvery) {
      ctx.progress(`${name}: waiting for room (${Math.round(waited)} of ${step.healthyTimeout} s): ${sized.why}`)
      said = waited
    }
    await ctx.control.clock.sleep(budgetPoll, ctx.signal)
    if (ctx.signal.aborted) return {status: 'interrupted', message: `stopped before ${name}; earlier batches are back in service`}
  }
}

/** An auto batch's headroom where the step gives none, in %. */
const defaultAutoHeadroom = 20
/** Seconds of the pool's requests its demand is read over. */
const demandWindow = 60

const describeBatch = (batch: CycleStep['batch']): string => (batch === 'auto' ? 'auto' : describeCount(batch))

/**
 * The next batch, from the targets as they stand now: those out of rotation go first, since
 * restarting them gives capacity back and takes none away. Read again before every batch, because
 * a target can fall out while the cycle runs (one that took a collapsing pool's last traffic holds
 * minutes of queue), and one left to a later batch would block the budget meanwhile.
 */
function nextBatch(left: Target[], now: Target[], size: number): Target[] {
  const healthy = new Set(now.filter((t) => t.health === 'healthy').map((t) => t.id))
  return [...left.filter((t) => !healthy.has(t.id)), ...left.filter((t) => healthy.has(t.id))].slice(0, size)
}

/** Per hook, the targets it has run on, and those a killed run had begun it on (with when) that the resumed run finishes. */
type HooksRan = Record<'restart' | 'remediate', Set<string>> & {finishing: Record<'restart' | 'remediate', Map<string, Date>>}

/**
 * A step's restart or remediation as the hooks port takes it. An SSM command's comment names the
 * run, the step and the kind, so a resumed run finds the one it sent; an ECS replacement's reason
 * says the same to whoever reads the stopped task.
 */
export function hookSpecOf(hook: CycleHook, kind: 'restart' | 'remediate', step: number, runId: string | undefined): HookSpec {
  const said = `sluice ${runId ?? 'run'} step ${step + 1} ${kind}`
  switch (hook.with) {
    case 'ssm':
      return {with: 'ssm', document: hook.ssm!.document, parameters: hook.ssm!.parameters, timeoutSeconds: hook.timeout, comment: said.slice(0, 100)}
    case 'ec2-reboot':
      return {with: 'ec2-reboot', settleSeconds: hook['ec2-reboot']!.settle, timeoutSeconds: hook.timeout}
    case 'ecs-replace':
      return {with: 'ecs-replace', cluster: hook['ecs-replace']!.cluster, service: hook['ecs-replace']!.service, timeoutSeconds: hook.timeout, reason: said}
    default:
      return {with: 'command', command: hook.command!, timeoutSeconds: hook.timeout, env: hook.env}
  }
}

/** What a restart is, in the plan's words. */
export function hookWords(hook: CycleHook): string {
  switch (hook.with) {
    case 'ssm':
      return `SSM ${hook.ssm!.document} on each instance, up to ${hook.timeout} s`
    case 'ec2-reboot':
      return `EC2 reboot of each instance until its status checks pass, up to ${hook.timeout} s`
    case 'ecs-replace':
      return `ECS task replaced by service ${hook['ecs-replace']!.service} (cluster ${hook['ecs-replace']!.cluster}) until the new one is healthy, up to ${hook.timeout} s`
    default:
      return hook.command!.join(' ')
  }
}

/**
 * A hook run on a target, as the journal records it. Nothing reads back whether a hook ran: one
 * a killed run had started counts as run (a target is never restarted twice; its health check on
 * the way back into rotation says whether it worked). A restart is not undone.
 */
const hookRan: MutationRules = {
  subject: (m) => `${m.resource}#hooks`,
  settle: async () => 'applied',
  undo: async (changes) => `the restarts and remediations on ${changes.at(-1)!.resource} are not undone`,
  drift: async () => null,
}

/** A restart with its timeout (and a reboot's settling) times the drill's time scale. */
const scaleHook = (hook: CycleHook, s: (seconds: number) => number): CycleHook => ({
  ...hook,
  timeout: s(hook.timeout),
  ...(hook['ec2-reboot'] ? {'ec2-reboot': {settle: s(hook['ec2-reboot'].settle)}} : {}),
})

/** A target known only by the id a journal recorded (`10.0.1.10:443`, `i-0abc:80`). */
function targetFromId(id: string): Target {
  const at = id.lastIndexOf(':')
  const host = at > 0 ? id.slice(0, at) : id
  const port = at > 0 ? Number(id.slice(at + 1)) : undefined
  return {
    id,
    targetId: host,
    health: 'unused',
    ...(isIP(host) !== 0 ? {ip: host} : {}),
    ...(port === undefined || Number.isNaN(port) ? {} : {port}),
  }
}

/** Which targets are out of rotation and how each stands, so a wait or a refusal can be checked by name. */
function outOfRotation(targets: Target[], size: number): string {
  const out = targets.filter((t) => t.health !== 'healthy')
  const named = out.slice(0, 4).map((t) => `${t.id} ${t.health}`)
  const gone = size - targets.length
  return [...named, ...(out.length > 4 ? [`${out.length - 4} more`] : []), ...(gone > 0 ? [`${gone} not registered`] : [])].join(', ')
}

async function cycleBatch(
  step: CycleStep,
  ctx: ActionContext,
  group: PoolPort,
  batch: Target[],
  name: string,
  budget: number,
  size: number,
  verdicts: GateVerdict[],
  ran: HooksRan,
  /** Filled with the targets that took the batch's places (an ECS service's new tasks). */
  fresh: Set<string>,
): Promise<StepOutcome | null> {
  const ids = batch.map((t) => t.id)
  const which = `${name} (${ids.length > 4 ? `${ids.slice(0, 3).join(', ')} … ${ids.at(-1)}` : ids.join(', ')})`

  // Room in the budget: targets out of rotation now, plus the healthy ones this batch takes out.
  const deadline = ctx.control.clock.now() + step.healthyTimeout
  for (;;) {
    const now = await group.targets()
    const inBatch = new Set(ids)
    const healthy = now.filter((t) => t.health === 'healthy')
    const out = size - healthy.length
    const taking = healthy.filter((t) => inBatch.has(t.id)).length
    // Restarting targets that are already out of rotation takes no capacity away: neither the
    // budget nor the headroom guard stands in its way. (A pool whose every server has stalled, as
    // in the 2024 CAFE incident, serves nothing; a guard that refused to restart them because the
    // targets left serve less than the demand would block the one way out.)
    if (taking === 0 || out + taking <= budget) {
      const refusal = taking === 0 ? null : await headroom(step, ctx, healthy, inBatch)
      if (refusal) return {status: 'failed', message: `${which}: ${refusal}`, verdicts}
      break
    }
    if (ctx.control.clock.now() >= deadline)
      return {
        status: 'failed',
        message: `${which}: ${out} of ${size} targets are already out of rotation (${outOfRotation(now, size)}); taking ${taking} more would exceed the disruption budget of ${budget}`,
        verdicts,
      }
    ctx.progress(`${which}: waiting for room in the disruption budget (${out} out: ${outOfRotation(now, size)}; budget ${budget})`)
    await ctx.control.clock.sleep(budgetPoll, ctx.signal)
    if (ctx.signal.aborted) return {status: 'interrupted', message: `stopped before ${which}`, verdicts}
  }

  // Targets already out (a batch a killed run left out: draining for the group's deregistration
  // delay, then gone) are not deregistered twice, but their drain is waited out all the same: a
  // target is never restarted while it still has requests in flight.
  const inGroup = new Set((await group.targets()).filter(isIn).map((t) => t.id))
  const drain = ids.filter((id) => inGroup.has(id))
  if (drain.length > 0) {
    ctx.progress(`${which}: draining`)
    await ctx.change('deregister', group.label, drain, null, () => group.deregister(drain))
  } else {
    ctx.progress(`${which}: already out of rotation; waiting for any drain to end`)
  }
  if (!(await group.waitDrained(ids, step.drainTimeout, ctx.signal))) ctx.warn(`${which}: still draining after ${step.drainTimeout} s; going on`)

  // From here to the batch's return there is no safe point to stop at: half-restarted targets
  // out of rotation help nobody. An interruption lets the hooks finish and the batch come back,
  // then stops (each hook still has its own timeout).
  // Each hook run is journalled, so a resume never restarts a target twice.
  const rejoined = new Set<string>()
  for (const kind of ['restart', 'remediate'] as const) {
    const hook = step[kind]
    if (!hook) continue
    const spec = hookSpecOf(hook, kind, step.index, ctx.control.runId)
    const due = batch.filter((t) => !ran[kind].has(t.id))
    const finishing = batch.filter((t) => ran.finishing[kind].has(t.id))
    const before = batch.length - due.length
    ctx.progress(`${which}: ${kind}${before > 0 ? ` (${before} already ${kind === 'restart' ? 'restarted' : 'remediated'} by the run this one resumes)` : ''}`)
    const report = (r: HookResult | void): ChangeReport => ({note: r?.note, produced: r?.replacements})
    const replace = (t: Target, how: () => Promise<HookResult | void>, finishing = false) =>
      // The task goes and another takes its place: a change to the group's members, journalled as such.
      ctx.change(
        'replace',
        group.label,
        [t.id],
        {cluster: (spec as EcsReplaceSpec).cluster, service: (spec as EcsReplaceSpec).service, ...(finishing ? {finishing} : {})},
        how,
        report,
      )
    const results = await Promise.allSettled([
      ...due.map((t) =>
        spec.with === 'ecs-replace'
          ? replace(t, () => ctx.control.hooks.run(kind, spec, t))
          : ctx.change(kind, group.label, null, t.id, () => ctx.control.hooks.run(kind, spec, t), report),
      ),
      ...finishing.map(async (t) => {
        const since = ran.finishing[kind].get(t.id)!
        const finish = async () => ctx.control.hooks.finish?.(kind, spec, t, since)
        // Finishing a replacement is journalled as one: the new tasks it waits for are the group's new members.
        if (spec.with === 'ecs-replace') return replace(t, finish, true)
        const result = await finish()
        if (result?.note) ctx.progress(`${t.id}: ${result.note}`)
        return result
      }),
    ])
    for (const r of results) if (r.status === 'fulfilled') for (const id of r.value?.replacements ?? []) fresh.add(id)
    const all = [...due, ...finishing]
    for (const [k, r] of results.entries()) if (r.status === 'fulfilled' && r.value?.rejoined) rejoined.add(all[k].id)
    const failed = results.flatMap((r, k) => (r.status === 'rejected' ? [`${all[k].id}: ${(r.reason as Error).message}`] : []))
    // A target whose hook failed stays out of rotation: returning it would put a broken server back.
    if (failed.length > 0) return {status: 'error', message: `${which}: ${kind} failed for ${failed.join('; ')}; the batch stays out of rotation`, verdicts}
  }

  // A replaced task's successor was registered by its service, and waited for: the old one is gone.
  const back = ids.filter((id) => !rejoined.has(id))
  if (back.length > 0) {
    ctx.progress(`${which}: returning to service`)
    await ctx.change('register', group.label, null, back, () => group.register(back))
  }
  const healthy = back.length === 0 || (await group.waitHealthy(back, step.healthyTimeout))
  if (ctx.signal.aborted) return {status: 'interrupted', message: `stopped after ${which} returned to service${healthy ? '' : ' (not yet healthy)'}`, verdicts}
  if (!healthy) {
    // Returned targets that do not pass their health checks are the relapse a gate is for: it is
    // judged like one (exit 3, with the measured share), not as a runtime error.
    const now = await group.targets()
    const healthy = now.filter((t) => back.includes(t.id) && t.health === 'healthy').length
    const verdict: GateVerdict = {
      step: step.index,
      gate: `returned targets healthy within ${step.healthyTimeout} s`,
      metric: 'healthy-targets',
      value: (healthy / back.length) * 100,
      threshold: 100,
      unit: '%',
      outcome: 'fail',
      at: ctx.control.clock.now(),
      context: which,
    }
    ctx.verdict(verdict)
    verdicts.push(verdict)
    return {
      status: step.onFailure === 'hold' ? 'held' : 'failed',
      message: `gate ${verdict.gate} failed at ${which}: measured ${healthy} of ${back.length} healthy (${Math.round(verdict.value!)}%), threshold 100%`,
      verdicts,
    }
  }

  if (step.gate) {
    const result = await ctx.watch(step.gate, step.bake, which)
    verdicts.push(...result.verdicts)
    if (result.outcome === 'interrupted') return {status: 'interrupted', message: `interrupted while ${which} baked`, verdicts}
    if (result.outcome === 'held') return {status: 'held', message: `${result.reason}; ${which} is back in service`, verdicts}
    if (result.outcome === 'fail') {
      if (step.onFailure === 'rollback') {
        await ctx.change('deregister', group.label, ids, null, () => group.deregister(ids))
        return {...gateFailure(step, result, `${which} taken back out of rotation`), verdicts}
      }
      return {...gateFailure(step, result, `stopped after ${which}`), verdicts}
    }
  } else if (step.bake > 0) {
    // An interruption is seen before the next batch; this batch is back in service either way.
    await ctx.hold(step.bake, `in the bake after ${which}`)
  }
  return null
}

/**
 * Each hook that names what some of the group's targets cannot give (`{ip}` on a Lambda target
 * group, an instance whose address cannot be found, `{port}` of a target with none): refused
 * before the run changes anything, rather than a batch drained and then stuck out of rotation
 * when its hook will not run.
 */
async function refusals(step: CycleStep, control: ControlPlane, signal?: AbortSignal): Promise<Problem[]> {
  const group = control.pools.get(step.pool)
  const hooks = (['restart', 'remediate'] as const).filter((kind) => step[kind])
  if (!group || hooks.length === 0) return []
  const targets = await group.targets(signal)
  const problems: Problem[] = []
  for (const kind of hooks) {
    const hook = step[kind]!
    const spec = hookSpecOf(hook, kind, step.index, control.runId)
    if (spec.with !== 'command') {
      for (const message of (await control.hooks.refusals?.(spec, targets, signal)) ?? [])
        problems.push({path: ['steps', step.index, kind, spec.with], message: `${message}. Nothing was changed`})
      continue
    }
    const missing = (await control.hooks.unfilled?.(spec, targets, signal)) ?? []
    for (const placeholder of [...new Set(missing.map((m) => m.placeholder))]) {
      const short = missing.filter((m) => m.placeholder === placeholder)
      const listed = short.length > 3 ? [...short.slice(0, 3).map((m) => m.why), `and ${short.length - 3} more`] : short.map((m) => m.why)
      problems.push({
        path: ['steps', step.index, kind, 'command'],
        message:
          `the ${kind} hook names ${placeholder}, which ${short.length} of the ${targets.length} targets of ${group.label} cannot give: ${listed.join('; ')}. ` +
          `Nothing was changed: a hook never runs with ${placeholder} empty. Name what these targets have instead ({id}, which every target has), or cycle a group whose targets have ${placeholder === '{ip}' ? 'addresses' : 'ports'}`,
      })
    }
  }
  return problems
}

/** Why taking targets out would leave too little capacity, or null when there is room. */
async function headroom(step: CycleStep, ctx: ActionContext, inRotation: Target[], out: Set<string>): Promise<string | null> {
  const percent = step.headroom ?? (step.batch === 'auto' ? defaultAutoHeadroom : undefined)
  if (percent === undefined) return null
  // Said first: on HAProxy a process's first read of its counters takes the whole window.
  ctx.progress(`measuring demand on ${step.pool} over ${demandWindow} s for the ${percent}% headroom check`)
  const {value: demand} = await ctx.metrics().read('request-rate', demandWindow, step.pool, ctx.signal)
  if (demand === null) return `cannot check the ${percent}% headroom: no request-rate data for ${step.pool} (missing data is never a pass)`
  const left = roomLeft(step.pool, inRotation, out, step.capacityPerTarget!)
  const kept = usable(left, percent / 100)
  if (kept >= demand) return null
  const now = left.warming > 0 ? ` now (${roomText(left)})` : ''
  return `refusing to drain: the ${left.inRotation} targets left can serve ${rps(left.capacityRps)}${now}, ${rps(kept)} after ${percent}% headroom, below the current ${rps(demand)}`
}

/**
 * Whether a target is in rotation as far as membership goes. A deregistered target stays listed
 * as `draining` for the group's deregistration delay (300 s by default): that is out, so a resume
 * within those minutes neither deregisters it again nor takes a deregistration that happened for
 * one that did not.
 */
const isIn = (t: Target): boolean => t.health !== 'unused' && t.health !== 'draining'

const groupOf = (m: Mutation, control: ControlPlane): PoolPort | undefined => [...control.pools.values()].find((g) => g.label === m.resource)

/** Whether deregistered or registered targets are (still) in the group. */
const membership: MutationRules = {
  subject: (m) => `${m.resource}#targets`,
  async settle(m, control) {
    const ids = (m.kind === 'deregister' ? m.before : m.after) as string[]
    const group = groupOf(m, control)
    if (!group) return null
    const registered = new Set((await group.targets()).filter(isIn).map((t) => t.id))
    const inGroup = ids.filter((id) => registered.has(id)).length
    if (inGroup === (m.kind === 'register' ? ids.length : 0)) return 'applied'
    if (inGroup === (m.kind === 'register' ? 0 : ids.length)) return 'not applied'
    return null
  },
  async undo(changes, control) {
    const out = new Set<string>()
    for (const m of changes) {
      if (m.kind === 'deregister') for (const id of m.before as string[]) out.add(id)
      // A replaced task is gone, and its service's new one registered by the service: nothing of it to return.
      else if (m.kind === 'replace') for (const id of m.before as string[]) out.delete(id)
      else for (const id of m.after as string[]) out.delete(id)
    }
    const last = changes.at(-1)!
    const group = groupOf(last, control)
    if (!group) return `${last.resource} is not a target group of this runbook any more`
    if (out.size === 0) return `every target the run took out of ${last.resource} is back in it`
    const ids = [...out]
    return {
      kind: 'register',
      resource: last.resource,
      before: null,
      after: ids,
      describe: `return ${ids.length} target${ids.length === 1 ? '' : 's'} the run left out of rotation to ${last.resource}`,
      apply: () => group.register(ids),
    }
  },
  async drift(changes, control) {
    // What the run left: each target it touched, in or out by its last change.
    const left = new Map<string, boolean>()
    for (const m of changes) {
      if (m.kind === 'replace') for (const id of m.before as string[]) left.delete(id)
      else for (const id of (m.kind === 'deregister' ? m.before : m.after) as string[]) left.set(id, m.kind === 'register')
    }
    const last = changes.at(-1)!
    const group = groupOf(last, control)
    if (!group) return null
    const registered = new Set((await group.targets()).filter(isIn).map((t) => t.id))
    const missing = [...left].filter(([id, inRotation]) => inRotation && !registered.has(id)).map(([id]) => id)
    const back = [...left].filter(([id, inRotation]) => !inRotation && registered.has(id)).map(([id]) => id)
    if (missing.length === 0 && back.length === 0) return null
    const count = (ids: string[]) => `${ids.length} target${ids.length === 1 ? '' : 's'} (${ids.join(', ')})`
    return {
      subject: `the targets of ${last.resource}`,
      left: [missing.length ? `${count(missing)} in rotation` : '', back.length ? `${count(back)} out of rotation` : ''].filter(Boolean).join('; '),
      now: [
        missing.length ? `${missing.length === 1 ? 'it is' : 'they are'} out` : '',
        back.length ? `${back.length === 1 ? 'it is' : 'they are'} back in` : '',
      ]
        .filter(Boolean)
        .join('; '),
      reapply: [
        ...(missing.length
          ? [
              {
                kind: 'register' as const,
                resource: last.resource,
                before: null,
                after: missing,
                describe: `return ${count(missing)} to ${last.resource}`,
                apply: () => group.register(missing),
              },
            ]
          : []),
        ...(back.length
          ? [
              {
                kind: 'deregister' as const,
                resource: last.resource,
                before: back,
                after: null,
                describe: `take ${count(back)} out of ${last.resource} again`,
                apply: () => group.deregister(back),
              },
            ]
          : []),
      ],
    }
  },
}

/**
 * An ECS task replaced by its service: one of the group's members, gone for good. Whether it was
 * begun is read from ECS (a task at that address still meant to run was never stopped); undone
 * and checked for drift with the group's other membership changes, which it leaves out.
 */
const replaced: MutationRules = {
  ...membership,
  async settle(m, control) {
    const {cluster, service} = m.after as {cluster: string; service: string}
    const id = (m.before as string[])[0]
    const spec: HookSpec = {with: 'ecs-replace', cluster, service, timeoutSeconds: 0, reason: ''}
    // Where the port cannot tell (a rehearsal's), the replacement counts as begun: a task is never stopped twice.
    return (await control.hooks.begun?.(spec, targetFromId(id))) === false ? 'not applied' : 'applied'
  },
}

/** A target group attribute the cycle sets first: settled by reading it, undone by setting it back. */
function attribute(
  kind: MutationKind & ('failover' | 'slow-start'),
  read: (g: PoolPort) => Promise<number | null>,
  write: (g: PoolPort, value: never) => Promise<void>,
  describe: (value: number | null, resource: string) => string,
): MutationRules {
  return {
    subject: (m) => `${m.resource}#${kind}`,
    async settle(m, control) {
      const group = groupOf(m, control)
      const now = group ? await read(group) : undefined
      return now === m.after ? 'applied' : now === m.before ? 'not applied' : null
    },
    async undo(changes: RecordedMutation[], control) {
      const last = changes.at(-1)!
      const original = changes[0].before
      const group = groupOf(last, control)
      if (!group) return `${last.resource} is not a target group of this runbook any more`
      if (original === last.after) return `${kind} of ${last.resource} is back where the run found it`
      return {
        kind,
        resource: last.resource,
        before: last.after,
        after: original,
        describe: describe(original as number | null, last.resource),
        apply: () => write(group, original as never),
      }
    },
    async drift(changes: RecordedMutation[], control) {
      const last = changes.at(-1)!
      const group = groupOf(last, control)
      if (!group) return null
      const now = await read(group)
      if (now === last.after) return null
      const words = (v: unknown) => (v === null ? 'off' : `${v as number}`)
      return {
        subject: `${kind} of ${last.resource}`,
        left: words(last.after),
        now: words(now),
        reapply: [
          {
            kind,
            resource: last.resource,
            before: now,
            after: last.after,
            describe: `set ${kind} of ${last.resource} to ${words(last.after)} again`,
            apply: () => write(group, last.after as never),
          },
        ],
      }
    },
  }
}

function exceeds(batch: CountOrPercent, budget: CountOrPercent): boolean {
  if ('count' in batch && 'count' in budget) return batch.count > budget.count
  if ('percent' in batch && 'percent' in budget) return batch.percent > budget.percent
  return false // mixed units: checked against the group's size when the step runs
}

export const cycle: ActionDefinition<CycleStep, typeof cycleSchema> = {
  action: 'cycle',
  schema: cycleSchema,
  defaultOnFailure: 'hold',
  title: (step) =>
    step.batch === 'auto' ? `Cycle ${step.pool} in batches sized by its room` : `Cycle ${step.pool} in batches of ${describeCount(step.batch)}`,
  plan(step, {targets, live}) {
    const size = live?.groupSizes.get(step.pool)
    return [
      step.batch === 'auto'
        ? `${backendOf(targets).poolInPlan(step.pool)} in batches sized before each one: the most targets the ones left in rotation (${step.capacityPerTarget} rps each, at their warm-up) can spare with ${step.headroom ?? defaultAutoHeadroom}% headroom at the pool's demand over ${demandWindow} s; at most ${step.budget ? `${describeCount(step.budget)} out of rotation` : 'half the pool at once (no budget given)'}`
        : `${backendOf(targets).poolInPlan(step.pool)} in batches of ${describeCount(step.batch)}, at most ${describeCount(step.budget ?? step.batch)} out of rotation`,
      ...(size === undefined || step.batch === 'auto' ? [] : [`all ${size} targets now in the group, ${resolveCount(step.batch, size)} per batch`]),
      ...(step.headroom === undefined || step.batch === 'auto' ? [] : [`keep ${step.headroom}% headroom at ${step.capacityPerTarget} rps per target`]),
      ...(step.failoverPercent === undefined ? [] : [`set routing failover: below ${step.failoverPercent}% healthy, route to every target`]),
      `drain → ${step.restart ? `restart (${hookWords(step.restart)}) → ` : ''}${step.remediate ? `remediate (${hookWords(step.remediate)}) → ` : ''}${step.restart?.with === 'ecs-replace' ? 'the service registers the new task' : 'return'}${step.slowStart !== undefined ? ` with ${step.slowStart} s slow start` : ''}`,
      ...(step.bake > 0 ? [`bake ${step.bake} s per batch`] : []),
      ...gatePlan(step),
    ]
  },
  expects: (step, {live}) =>
    live.groupSizes.get(step.pool) === 0 ? [`${step.pool} has no targets registered now: the step fails, as there is nothing to cycle`] : [],
  refusals,
  changesLive: true,
  changes: 'pools',
  resolve(raw, {common, path, fail, gate: resolveGate, backend, defaults, targets}) {
    for (const problem of backend.stepProblems(raw, path)) fail(problem.path, problem.message)
    if (raw.budget && raw.batch !== 'auto' && exceeds(raw.batch, raw.budget))
      fail([...path, 'batch'], `a batch of ${describeCount(raw.batch)} is larger than the disruption budget of ${describeCount(raw.budget)}`)
    const capacityPerTarget = raw.capacityPerTarget ?? targets.capacityPerTarget?.[raw.pool]
    if (raw.batch === 'auto' && capacityPerTarget === undefined)
      fail(
        [...path, 'batch'],
        `batch: auto sizes each batch by what the targets left can serve: give capacityPerTarget, or ${raw.pool}'s in targets.capacityPerTarget`,
      )
    else if (raw.headroom !== undefined && capacityPerTarget === undefined)
      fail([...path, 'headroom'], 'a headroom guard needs capacityPerTarget (requests per second one target can serve)')
    for (const kind of ['restart', 'remediate'] as const) {
      const hook = raw[kind]
      if (!hook || hook.with === 'command') continue
      if (!backend.actsThroughAws)
        fail([...path, kind, hook.with], `${hook.with} restarts targets through AWS, and ${raw.pool} is not an AWS target group: restart it with a command`)
      else if (hook.with === 'ecs-replace' && kind === 'remediate')
        fail([...path, kind, hook.with], 'ecs-replace is a restart (the task is replaced by a new one): give it as restart')
    }
    if (raw.restart?.with === 'ecs-replace' && raw.remediate)
      fail(
        [...path, 'remediate'],
        "the restart replaces each task with a new one, which starts clean: there is nothing to remediate, and the old task's address is gone",
      )
    const gate = raw.gate ? resolveGate(raw.gate, [...path, 'gate']) : undefined
    return {...raw, ...common, gate, bake: raw.bake ?? defaults.bake ?? (gate ? gate.window : 0), capacityPerTarget}
  },
  metricsRead: (raw) => [...(raw.gate ? [raw.gate.metric] : []), ...(raw.headroom === undefined && raw.batch !== 'auto' ? [] : ['request-rate' as const])],
  scaleTimes: (step, {seconds: s, gate}) => ({
    ...step,
    drainTimeout: s(step.drainTimeout),
    healthyTimeout: s(step.healthyTimeout),
    bake: s(step.bake),
    ...(step.restart ? {restart: scaleHook(step.restart, s)} : {}),
    ...(step.remediate ? {remediate: scaleHook(step.remediate, s)} : {}),
    ...(step.slowStart === undefined ? {} : {slowStart: s(step.slowStart)}),
    ...(step.gate ? {gate: gate(step.gate)} : {}),
  }),
  locks: (step, targets) => [
    ...backendOf(targets).locks.pool(step.pool),
    // Another run replacing tasks of the same service through another target group would take the service below its count twice over.
    ...(step.restart?.['ecs-replace'] ? [`ecs:${step.restart['ecs-replace'].cluster}/${step.restart['ecs-replace'].service}`] : []),
  ],
  iam: (step, targets) =>
    backendOf(targets)
      .iam.pool(step.pool, {
        attributes: step.slowStart !== undefined || step.failoverPercent !== undefined,
        addresses: [step.restart, step.remediate].some((hook) => hook?.command?.some((arg) => arg.includes('{ip}'))),
      })
      .concat(
        [step.restart, step.remediate].flatMap((hook) => {
          if (!hook || hook.with === 'command') return []
          const needs: RestartIamNeeds =
            hook.with === 'ssm'
              ? {with: 'ssm', document: hook.ssm!.document}
              : hook.with === 'ecs-replace'
                ? {with: 'ecs-replace', ...hook['ecs-replace']!}
                : {with: 'ec2-reboot'}
          return backendOf(targets).iam.restart(step.pool, needs)
        }),
      ),
  mutations: {
    deregister: membership,
    register: membership,
    restart: hookRan,
    remediate: hookRan,
    replace: replaced,
    failover: attribute(
      'failover',
      (g) => g.failoverPercent(),
      (g, v: number | null) => g.setFailoverPercent(v),
      (v, tg) => `set routing failover of ${tg} back to ${v === null ? 'off' : `${v}%`}`,
    ),
    'slow-start': attribute(
      'slow-start',
      (g) => g.slowStart(),
      (g, v: number) => g.setSlowStart(v),
      (v, tg) => `set slow start of ${tg} back to ${v} s`,
    ),
  },
  run,
}
