import type {ControlPlane, WeightMap, WeightsPort} from '../ports/control-plane.js'
import type {GateVerdict, MutationKind} from '../ports/io.js'
import type {Gate} from '../runbook/gate.js'
import type {TargetsData} from '../runbook/schema.js'
import type {StepCommon} from '../runbook/step-common.js'
import type {PaceRule} from '../pacing/rule.js'
import {pacerOf} from './pacer-of.js'
import {seenText, waitForSplit, type SplitPlan} from '../pacing/split.js'
import {gateFailure, sameState, type ActionContext, type MutationRules, type StepOutcome} from './action.js'

// A ramp of weights, whoever keeps them: a weighted DNS record (ramp), a load balancer rule's
// split between target groups (weighted-target-groups), HAProxy's ramp map.

/**
 * Weights for one ramp step: the ramped set gets `percent`, the other sets share the rest in
 * proportion to their weights before the ramp (equally if those were all 0).
 */
export function weightsAt(percent: number, set: string, start: WeightMap): WeightMap {
  const others = Object.keys(start)
    .filter((s) => s !== set)
    .sort()
  const rest = 100 - percent
  const total = others.reduce((sum, s) => sum + start[s], 0)
  const weights: WeightMap = {[set]: percent}
  let given = 0
  others.forEach((s, k) => {
    const w = k === others.length - 1 ? rest - given : Math.round(rest * (total > 0 ? start[s] / total : 1 / others.length))
    weights[s] = w
    given += w
  })
  return weights
}

/**
 * What a ramp takes for granted about the weights it starts from: its set holds less than its
 * first step (traffic parked elsewhere), and the weights are not all 0 (where DNS answers every
 * set alike). A fresh ramp goes through every step from the first, whatever it finds.
 */
export function rampExpects(set: string, first: number, weights: WeightMap, label: string, paced = false): string[] {
  const total = Object.values(weights).reduce((a, b) => a + b, 0)
  if (total === 0)
    return [
      `every set of ${label} is at 0 now (${describeWeights(weights)}), so clients get all of them alike; the ramp's first change gives ${set} ${paced ? 'its first paced share' : `${first}%`}`,
    ]
  const share = (weights[set] / total) * 100
  // A paced ramp goes on from where the set stands.
  if (paced || share <= first) return []
  return [`${set} has ${Math.round(share)}% of ${label} now, more than the ramp's first step of ${first}%: its first change takes ${set} down to ${first}%`]
}

export function describeWeights(weights: WeightMap): string {
  return Object.entries(weights)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([s, w]) => `${s}=${w}`)
    .join(' ')
}

export const sameWeights = (a: WeightMap, b: WeightMap): boolean => Object.keys({...a, ...b}).every((k) => a[k] === b[k])

/**
 * The plan's line for how `sluice rollback` would take a ramp back: sized by the receiving pools'
 * stated capacity where there is one, else back through the ramp's own weights (src/live/way-back.ts).
 */
export function wayBackPlan(targets: TargetsData, receiving: string[]): string {
  const pools = receiving.map((k) => targets.dns?.sets[k] ?? k)
  const sized = pools.filter((p) => targets.capacityPerTarget?.[p] !== undefined)
  const how =
    sized.length > 0 ? `in steps sized by ${sized.join(', ')}'s capacity in rotation (targets.capacityPerTarget)` : 'back through the weights it passed'
  return `rollback: ${how}, each judged on the pool receiving the traffic; \`sluice rollback --now\` moves at once`
}

/** What a weights ramp steps through: the key that gains traffic, its schedule in %, the bake and gate per step. */
export interface WeightsRampStep extends StepCommon {
  set: string
  /** The weights in %; a paced ramp's is where it ends. */
  schedule: number[]
  /** `schedule: auto`: each next share is found as the ramp runs (src/pacing). */
  pace?: PaceRule
  /** Whether each change's split is seen served before its bake (absent: never, as for a one-off command without metrics). */
  split?: SplitPlan
  bake: number
  allowShortBake: boolean
  gate?: Gate
}

/**
 * Ramps traffic onto one key of a weights port step by step (a DNS record's set, a load balancer
 * rule's target group). Each step is one change, baked for at least the port's TTL and admitted
 * only if its gate passes. A failed gate, a gate that cannot read its metrics, a failed change, or
 * an interruption puts the weights back to the last step that passed: a ramp never stays on
 * weights its gate did not pass. Changes are recorded as `kind` changes to the port's label,
 * which weightsRules' `portOf` finds the port again by.
 */
export async function runWeightsRamp(step: WeightsRampStep, ctx: ActionContext, dns: WeightsPort, kind: MutationKind): Promise<StepOutcome> {
  const ttl = await dns.ttl(ctx.signal)
  if (step.bake < ttl) {
    if (!step.allowShortBake)
      return {
        status: 'failed',
        message: `the bake of ${step.bake} s is shorter than the TTL of ${dns.label} (${ttl} s); not every client would see a step before it is judged`,
      }
    ctx.warn(`bake of ${step.bake} s is shorter than the TTL of ${ttl} s (allowShortBake is set)`)
  }
  const now = await dns.readWeights(ctx.signal)
  if (!(step.set in now)) return {status: 'error', message: `${dns.label} has no weighted set "${step.set}"; it has ${Object.keys(now).join(', ')}`}
  // A resumed ramp keeps the split it started from, and goes on from where the weights are now:
  // steps below the set's current share are done, and the current one is judged again.
  const first = ctx.resumed?.find((m) => m.kind === kind && m.phase === 'intent')
  const start = (first?.before as WeightMap | undefined) ?? now
  let from = 0
  const shareNow = shareOf(now, step.set)
  if (ctx.resumed && !step.pace) {
    const share = shareNow
    from = step.schedule.findIndex((p) => p >= share - 0.5)
    if (from < 0) from = step.schedule.length
    if (from > 0)
      ctx.progress(
        `resuming at ${step.set} ${Math.round(share)}%: ${step.schedule
          .slice(0, from)
          .map((p) => `${p}%`)
          .join(', ')} done before`,
      )
  }

  let current = now
  // What the port may hold of this step's doing: what it read, then what it set; after a change
  // that failed or timed out, either side of it. Anything else there is someone else's change.
  let ours: {weights: WeightMap[]; how: string} = {weights: [now], how: 'read'}
  let lastGood = from > 0 ? weightsAt(step.schedule[from - 1], step.set, start) : start
  let lastGoodLabel = from > 0 ? `${step.set} ${step.schedule[from - 1]}% (${describeWeights(lastGood)})` : `the starting weights (${describeWeights(start)})`
  // A paced ramp resumed goes on from the share it reached: the change that took it there moved
  // on only from weights whose gate passed (its `before`), and the share now is judged again.
  let rejudge: number | null = null
  if (step.pace && ctx.resumed) {
    const last = ctx.resumed.filter((m) => m.kind === kind && m.phase === 'intent').at(-1)
    if (last && sameWeights(last.after as WeightMap, now) && shareOf(last.before as WeightMap, step.set) < shareNow) {
      lastGood = last.before as WeightMap
      lastGoodLabel = `${step.set} ${Math.round(shareOf(lastGood, step.set))}% (${describeWeights(lastGood)})`
      rejudge = Math.round(shareNow)
      ctx.progress(`resuming at ${step.set} ${rejudge}%, judged again before the next paced step`)
    }
  }
  const pacer = pacerOf(step, ctx, ttl)
  const end = step.schedule.at(-1)!
  const verdicts: GateVerdict[] = []
  const handChange = (signal: AbortSignal) => changedByHand(dns, ours, ctx.controls?.runId, signal)
  // Puts the weights back to the last step that passed, and says so (or why it could not). It
  // runs after an interruption too, so it gets a deadline of its own rather than the run's signal.
  // Weights someone else set meanwhile are not overwritten: that is drift, said and left.
  const revert = async (): Promise<{ok: boolean; text: string; drift?: true}> => {
    if (sameWeights(current, lastGood)) return {ok: true, text: `weights back to ${lastGoodLabel}`}
    const deadline = AbortSignal.timeout(revertDeadline * 1000)
    try {
      const drift = await handChange(deadline)
      if (drift) return {ok: false, drift: true, text: `not put back to ${lastGoodLabel}: ${drift}`}
      await ctx.change(kind, dns.label, current, lastGood, () => dns.applyWeights(lastGood, deadline))
    } catch (error) {
      return {
        ok: false,
        text: `could not put the weights back to ${lastGoodLabel}${deadline.aborted ? ` within ${revertDeadline} s` : ''}: ${(error as Error).message}`,
      }
    }
    current = lastGood
    ours = {weights: [lastGood], how: 'set'}
    return {
      ok: true,
      text: `weights back to ${lastGoodLabel}${deadline.aborted ? ` (the change is made; it had not reached every name server within ${revertDeadline} s)` : ''}`,
    }
  }
  const interrupted = async (at: string): Promise<StepOutcome> => ({status: 'interrupted', message: `interrupted at ${at}; ${(await revert()).text}`, verdicts})

  const fixed = step.schedule.slice(from)
  for (let k = 0; ; k++) {
    let percent: number
    if (pacer === null) {
      if (k >= fixed.length) break
      percent = fixed[k]
      // A pause (`sluice pause`) holds here, between steps, on weights whose gate passed.
      if (k > 0) await ctx.checkpoint(`before ${step.set} ${percent}%, at ${lastGoodLabel}`)
    } else {
      const reached = shareOf(lastGood, step.set)
      if (rejudge === null && reached >= end - 0.5) break
      if (k > 0) await ctx.checkpoint(`before the next paced step, at ${lastGoodLabel}`)
      if (ctx.signal.aborted) return {status: 'interrupted', message: `stopped before the next paced step; holding at ${lastGoodLabel}`, verdicts}
      if (rejudge !== null) {
        percent = rejudge
        rejudge = null
      } else {
        const next = await pacer.next(Math.round(reached), end)
        if (next.kind === 'interrupted') return {status: 'interrupted', message: `stopped while waiting for room; holding at ${lastGoodLabel}`, verdicts}
        if (next.kind === 'held') return {status: 'held', message: `${next.message}; holding at ${lastGoodLabel}`, verdicts}
        percent = next.to
      }
    }
    if (ctx.signal.aborted) return {status: 'interrupted', message: `stopped before ${step.set} ${percent}%; holding at ${lastGoodLabel}`, verdicts}
    const weights = weightsAt(percent, step.set, start)
    const at = `${step.set} ${percent}%`
    // Before each step but the first (read a moment ago), the weights are read again: one a
    // person changed since the last step is drift, and the ramp stops on it rather than overwrite it.
    if (k > 0) {
      let drift: string | null
      try {
        drift = await handChange(ctx.signal)
      } catch (error) {
        if (ctx.signal.aborted) return {status: 'interrupted', message: `stopped before ${at}; holding at ${lastGoodLabel}`, verdicts}
        return {status: 'error', message: `${(error as Error).message}; nothing more was changed, holding at ${lastGoodLabel}`, verdicts}
      }
      if (drift) return {status: 'refused', message: `stopped before ${at}: ${drift}`, verdicts}
    }
    let served = ''
    if (!sameWeights(weights, current)) {
      const before = current
      // From here the weights may be the new ones, whether or not the change reports back.
      current = weights
      ours = {weights: [before, weights], how: 'set'}
      try {
        await ctx.change(kind, dns.label, before, weights, () => dns.applyWeights(weights, ctx.signal))
      } catch (error) {
        if (ctx.signal.aborted) return interrupted(at)
        // A change that failed or timed out may still have landed: go back to what passed.
        return {status: 'error', message: `${(error as Error).message}; ${(await revert()).text}`, verdicts}
      }
      ours = {weights: [weights], how: 'set'}
      // The bake judges the split set only once it is served.
      if (step.split?.kind === 'measure') {
        const split = await waitForSplit(
          step.split,
          before,
          weights,
          step.set,
          {metrics: () => ctx.metrics(), now: () => ctx.control.clock.now(), signal: ctx.signal, hold: (t, w) => ctx.hold(t, w)},
          step.gate?.interval ?? splitLook,
        )
        if (split.kind === 'interrupted') return interrupted(at)
        if (split.kind === 'late') return {status: 'held', message: `${at}: ${split.why}; ${(await revert()).text}`, verdicts}
        served = `; ${split.kind === 'seen' ? seenText(split.seen) : split.why}`
      }
    }
    ctx.progress(`${step.set} at ${percent}% (${describeWeights(weights)})${served}, baking ${step.bake} s`)
    if (step.gate) {
      const result = await ctx.watch(step.gate, step.bake, at)
      verdicts.push(...result.verdicts)
      if (result.outcome === 'interrupted') return interrupted(at)
      // The judge could not tell: nothing shows this share worse, nor rules it out. It stays, for a person to decide.
      if (result.outcome === 'held')
        return {status: 'held', message: `${result.reason}; holding at ${step.set} ${percent}% (${describeWeights(weights)})`, verdicts}
      if (result.outcome === 'fail') {
        // A gate that failed, or whose source could not be read: either way not a pass.
        const back = await revert()
        const outcome = gateFailure(step, result, back.text)
        // A hand change found on the way back stops the run as drift does, whatever the gate said.
        return {...outcome, status: back.drift ? 'refused' : back.ok ? outcome.status : 'error', verdicts}
      }
    } else {
      if ((await ctx.hold(step.bake, `in the bake at ${step.set} ${percent}%`)) === 'interrupted') return interrupted(at)
    }
    lastGood = weights
    lastGoodLabel = `${step.set} ${percent}% (${describeWeights(weights)})`
    const settled = pacer ? await pacer.took(percent) : {kind: 'done' as const}
    if (settled.kind === 'interrupted') return {status: 'interrupted', message: `stopped at ${lastGoodLabel}`, verdicts}
    if (settled.kind === 'held') return {status: 'held', message: `${settled.message}; holding at ${lastGoodLabel}`, verdicts}
  }
  return {status: 'done', message: `${step.set} at ${end}%`, verdicts}
}

/**
 * Why a counts gate cannot judge a ramp's last step, when it cannot: it weighs the receiving pool
 * against a baseline pool over the same intervals, and at 100% a baseline in the same split takes
 * no traffic, so that step could only hold (tune found every such candidate held at 100%).
 */
export function countsAtFull(gate: Gate | undefined, end: number, receiving: string, sameSplit: string[]): string | null {
  if (gate?.judge !== 'counts' || end < 100 || !gate.baseline || gate.baseline === 'before' || !sameSplit.includes(gate.baseline.pool)) return null
  const base = gate.baseline.pool
  return (
    `judge: counts weighs ${receiving} against ${base} over the same intervals, and at ${receiving} 100% ${base} takes no traffic: ` +
    `this schedule's last step could only hold. End this ramp below 100, and take the last step in a ramp of its own behind a threshold gate (error-rate ≤ N%)`
  )
}

/** A key's share of a weights map, in %. */
export function shareOf(weights: WeightMap, key: string): number {
  const total = Object.values(weights).reduce((a, b) => a + b, 0)
  return total > 0 ? ((weights[key] ?? 0) / total) * 100 : 0
}

/**
 * Whether the weights are still what this ramp step left (`ours`), read now; when someone else
 * changed them, what they are against what sluice read or set, and how to go on. A ramp never
 * moves on from, or back over, weights it did not set: the next step's change would overwrite a
 * person's decision (traffic moved off a pool they distrust) without a word.
 */
async function changedByHand(
  port: WeightsPort,
  ours: {weights: WeightMap[]; how: string},
  runId: string | undefined,
  signal: AbortSignal,
): Promise<string | null> {
  const found = await port.readWeights(signal)
  const seen = (w: WeightMap) => Object.fromEntries(Object.keys(w).map((k) => [k, found[k]]))
  if (ours.weights.some((w) => sameWeights(seen(w), w))) return null
  const last = ours.weights.at(-1)!
  const advice = runId
    ? ` \`sluice resume ${runId} --reapply\` puts back ${describeWeights(last)} and goes on with the ramp; \`sluice rollback ${runId} --from-live\` takes the run back from the weights there now; \`sluice status --run ${runId}\` shows both`
    : ''
  return (
    `the weights of ${port.label} were changed outside this run: sluice ${ours.how} ${describeWeights(last)}, and found ${describeFound(seen(last))}. ` +
    `sluice does not overwrite a change it did not make, so nothing more was changed.${advice}`
  )
}

/** Weights read back, a key gone from the port said as such. */
const describeFound = (weights: Record<string, number | undefined>): string =>
  Object.entries(weights)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([s, w]) => (w === undefined ? `${s} gone` : `${s}=${w}`))
    .join(' ')

/**
 * Seconds a ramp's step back may take. A step back is a read and one change, each answering in
 * well under a second: 20 s leaves room for one hung attempt (10 s) and its retry. It is not
 * the run's signal, because it has to run after an interruption.
 */
const revertDeadline = 20

/** Seconds between looks at the split served, for a ramp without a gate to take its interval from. */
const splitLook = 10

/**
 * How a weights change is settled, undone and checked for drift, whichever port it went through:
 * `portOf` finds that port again from the control plane and the change's resource.
 */
export function weightsRules(kind: MutationKind, portOf: (control: ControlPlane, resource: string) => WeightsPort): MutationRules {
  return {
    subject: (m) => `${m.resource}#${kind}`,
    async settle(m, control) {
      const now = await portOf(control, m.resource).readWeights()
      const pick = (w: WeightMap) => Object.fromEntries(Object.keys(w).map((k) => [k, now[k]]))
      if (sameState(pick(m.after as WeightMap), m.after)) return 'applied'
      if (sameState(pick(m.before as WeightMap), m.before)) return 'not applied'
      return null
    },
    async undo(changes, control) {
      const original = changes[0].before as WeightMap
      const last = changes.at(-1)!
      if (sameState(original, last.after)) return `the weights of ${last.resource} are back where the run found them`
      return {
        kind,
        resource: last.resource,
        before: last.after,
        after: original,
        describe: `set the weights of ${last.resource} back to ${describeWeights(original)}`,
        apply: () => portOf(control, last.resource).applyWeights(original),
        applyStep: (weights) => portOf(control, last.resource).applyWeights(weights as WeightMap),
      }
    },
    async drift(changes, control) {
      const last = changes.at(-1)!
      const left = last.after as WeightMap
      const all = await portOf(control, last.resource).readWeights()
      const now = Object.fromEntries(Object.keys(left).map((k) => [k, all[k]]))
      if (sameState(now, left)) return null
      return {
        subject: `the weights of ${last.resource}`,
        left: describeWeights(left),
        now: describeWeights(now),
        live: now,
        reapply: [
          {
            kind,
            resource: last.resource,
            before: now,
            after: left,
            describe: `set the weights of ${last.resource} back to ${describeWeights(left)}`,
            apply: () => portOf(control, last.resource).applyWeights(left),
          },
        ],
      }
    },
  }
}
