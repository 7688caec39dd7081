import type {Runbook} from '../loader/runbook.js'
import {requestsNeeded} from '../judge/counts.js'
import type {ControlPlane} from '../ports/control-plane.js'
import {beforeLooks, countsLooks, type Gate} from '../runbook/gate.js'

/**
 * What each counts-judged step's bake would hold at the demand there is now, beside what the judge
 * needs to tell its margin apart (`sluice plan --live`): a bake that holds too few requests ends
 * inconclusive and holds, so the plan says so before the run, not the gate after it.
 *
 * Demand and the baseline's error rate are read over `seconds` (not the gate's window: HAProxy's
 * counters answer a first read only after the whole window, and a plan should not wait for it).
 * The need is the judge's own sum (requestsNeeded): requests on the pool for a regression of twice
 * the margin to fail and pools alike to pass, each 95% of the time, at the baseline's rate now. A
 * baseline with no errors now is taken at 0.1%, where the sum is near its least: no errors in ten
 * seconds is not a rate. Relative to before, the baseline is the pool itself over the gate's window
 * before each change, at the share it has then: where it has none, the step would refuse to start.
 */
export async function countsNow(
  runbook: Runbook,
  control: ControlPlane,
  fromStep: number,
  seconds: number,
  signal?: AbortSignal,
): Promise<Map<number, string>> {
  const found = new Map<number, string>()
  const metrics = control.metrics
  if (!metrics) return found
  for (const step of runbook.steps.slice(fromStep)) {
    const gate: Gate | undefined = 'gate' in step ? step.gate : undefined
    if (gate?.judge !== 'counts' || !gate.pool || !gate.baseline) continue
    const before = gate.baseline === 'before'
    const shares = step.action === 'ramp' || step.action === 'weighted-target-groups' ? (step.pace ? [] : step.schedule) : null
    if (shares !== null && shares.length === 0) continue
    const bake = 'bake' in step && typeof step.bake === 'number' ? step.bake : gate.window
    const line = async (): Promise<string> => {
      const baselinePool = gate.baseline === 'before' ? gate.pool! : gate.baseline!.pool
      // A check judges the pool as it is: its own share of the demand now.
      const [all, pool, base] = await Promise.all([
        metrics.read('request-rate', seconds, undefined, signal),
        shares === null || before ? metrics.read('request-rate', seconds, gate.pool, signal) : Promise.resolve(null),
        metrics.read('error-rate', seconds, baselinePool, signal),
      ])
      if (all.value === null || all.value <= 0) return `now: no requests in the last ${seconds} s, so no telling how many the bake will hold`
      const rate = base.value ?? 0
      const poolNow = Math.min(100, (100 * (pool?.value ?? 0)) / all.value)
      const question = {baselineRate: Math.max(0.1, rate), marginPoints: gate.threshold, confidence: gate.confidence / 100, looks: countsLooks(gate, bake)}
      const n = (x: number) => x.toLocaleString('en-US')
      const points = shares ?? [poolNow]
      const parts = points.map((percent, i) => {
        const share = percent / 100
        const held = Math.round(all.value! * share * bake)
        const where = shares === null ? `at ${gate.pool}'s ${Math.round(percent)}% now` : `at ${gate.pool} ${percent}%`
        // Before the change, the pool is at the point before this one: for the first, where it is now.
        const beforeShare = (shares === null || i === 0 ? poolNow : points[i - 1]) / 100
        if (before && beforeShare <= 0)
          return `${where} no requests on ${gate.pool} before the change to judge against: the step would stop before changing anything`
        const needs = before
          ? requestsNeeded({
              ...question,
              baselineRatio: (beforeShare * gate.window) / Math.max(1e-9, share * bake),
              baselineIntervals: beforeLooks(gate),
            })
          : requestsNeeded({...question, share: Math.min(0.99, Math.max(0.01, share))})
        return `${where} about ${n(held)} of the ${n(needs)} it needs${held < needs ? ' (short: a verdict may take the inconclusive intervals after the bake, or hold)' : ''}`
      })
      return (
        `now: ${n(Math.round(all.value))} rps in all, ${baselinePool} erring ${rate.toFixed(rate > 0 && rate < 0.1 ? 2 : 1)}% (read over ${seconds} s); ` +
        `the ${bake} s bake holds, on ${gate.pool}, ${parts.join('; ')}`
      )
    }
    found.set(step.index, await line().catch((error: Error) => `now: cannot tell what the bake will hold: ${error.message}`))
  }
  return found
}
