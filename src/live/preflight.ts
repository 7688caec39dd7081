import type {LiveView} from '../actions/action.js'
import {describeWeights} from '../actions/weights-ramp.js'
import {planRunbook} from '../engine/plan.js'
import {FailedError} from '../errors.js'
import type {ControlPlane} from '../ports/control-plane.js'
import type {PlannedStep} from '../ports/io.js'
import type {Runbook} from '../loader/runbook.js'
import {backendOf} from '../runbook/targets.js'

/**
 * Reads everything the runbook will touch before anything changes: the record's weighted sets,
 * each target group, the listener's rules. An unknown resource or a missing permission stops the
 * run here (exit 1), with nothing changed. Returns what it found, and the run's one plan told in
 * the live numbers, for the person to confirm.
 */
export async function preflight(runbook: Runbook, control: ControlPlane, signal?: AbortSignal, fromStep = 0): Promise<Preflight> {
  const lines: string[] = []
  const live: LiveView = {groupSizes: new Map(), rulesLabel: control.restrictions?.label}
  if (control.weights) {
    live.weights = await control.weights.readWeights(signal)
    const ttl = await control.weights.ttl(signal)
    const backend = backendOf(runbook.targets)
    for (const set of Object.keys(backend.weightedSets ?? {}))
      if (!(set in live.weights))
        throw new FailedError(`${control.weights.label} has no ${backend.sets.noun} "${set}"; it has ${Object.keys(live.weights).join(', ')}`)
    lines.push(`${control.weights.label} (TTL ${ttl} s) now: ${describeWeights(live.weights)}`)
  }
  for (const [pool, group] of control.pools) {
    const targets = await group.targets(signal)
    live.groupSizes.set(pool, targets.length)
    lines.push(`${group.label} now: ${targets.filter((t) => t.health === 'healthy').length} of ${targets.length} targets healthy`)
  }
  if (control.restrictions) {
    const rules = await control.restrictions.list()
    live.restricted = rules.map((r) => r.type)
    lines.push(`${control.restrictions.label} now: ${rules.length === 0 ? 'no restrictions' : `restricting ${rules.map((r) => r.type).join(', ')}`}`)
  }
  // A damaged freeze record is shown, not fatal here: `unfreeze --force` must be able to clear it.
  const freeze = await control.freeze.get().catch((error: Error) => error)
  lines.push(
    freeze instanceof Error
      ? `freeze now: damaged: ${freeze.message}`
      : freeze
        ? `freeze now: frozen since ${freeze.since} by ${freeze.by}: ${freeze.reason}`
        : 'freeze now: none',
  )
  return {now: lines, plan: planRunbook(runbook, live, fromStep)}
}

export interface Preflight {
  /** What is true now, one line per resource the run touches. */
  now: string[]
  /** The steps still to run, told in live numbers, each from the state the ones before leave. */
  plan: PlannedStep[]
}
