import {weightsAt, describeWeights} from '../actions/ramp.js'
import type {ControlPlane, WeightMap} from '../ports/control-plane.js'
import {FailedError} from '../errors.js'
import type {Runbook} from '../runbook/load.js'
import {describeCount, resolveCount} from '../runbook/units.js'

/**
 * Reads everything the runbook will touch before anything changes: the record's weighted sets,
 * each target group, the listener's rules. An unknown resource or a missing permission stops the
 * run here (exit 1), with nothing changed. Returns the changes the run will make, for the person to confirm.
 */
export async function preflight(runbook: Runbook, control: ControlPlane): Promise<string[]> {
  const lines: string[] = []
  let weights: WeightMap | undefined
  if (control.dns) {
    weights = await control.dns.readWeights()
    const ttl = await control.dns.ttl()
    for (const set of Object.keys(runbook.targets.dns?.sets ?? {}))
      if (!(set in weights)) throw new FailedError(`${control.dns.label} has no weighted set "${set}"; it has ${Object.keys(weights).join(', ')}`)
    lines.push(`${control.dns.label} (TTL ${ttl} s) now: ${describeWeights(weights)}`)
  }
  const sizes = new Map<string, number>()
  for (const [pool, group] of control.targetGroups) {
    const targets = await group.targets()
    sizes.set(pool, targets.length)
    lines.push(`${group.label} now: ${targets.filter((t) => t.health === 'healthy').length} of ${targets.length} targets healthy`)
  }
  if (control.rules) {
    const rules = await control.rules.list()
    lines.push(`${control.rules.label} now: ${rules.length === 0 ? 'no restrictions' : `restricting ${rules.map((r) => r.type).join(', ')}`}`)
  }
  const freeze = await control.freeze.get()
  lines.push(freeze ? `freeze now: frozen since ${freeze.since} by ${freeze.by}: ${freeze.reason}` : 'freeze now: none')

  lines.push('', 'This run will:')
  for (const step of runbook.steps) {
    const n = `${step.index + 1}.`
    switch (step.action) {
      case 'ramp': {
        const start = weights ?? {}
        const path = step.schedule.map((p) => describeWeights(weightsAt(p, step.set, start)))
        lines.push(`${n} change weights ${describeWeights(start)} → ${path.join(' → ')} (one change per step, gated)`)
        break
      }
      case 'cycle': {
        const size = sizes.get(step.pool) ?? 0
        lines.push(`${n} drain, ${step.restart ? 'restart, ' : ''}${step.remediate ? 'remediate, ' : ''}and return all ${size} targets of ${step.pool} in batches of ${describeCount(step.batch)} (${resolveCount(step.batch, size)})`)
        break
      }
      case 'restrict':
        lines.push(`${n} add a 503 rule for ${step.type} (${[...step.paths, ...Object.keys(step.headers).map((h) => `header ${h}`)].join(', ') || 'no match given'}) on ${control.rules?.label}`)
        break
      case 'lift':
        lines.push(`${n} remove the ${step.type} rule from ${control.rules?.label}`)
        break
      case 'freeze':
        lines.push(`${n} record a change freeze: ${step.reason}`)
        break
      case 'unfreeze':
        lines.push(`${n} clear the change freeze`)
        break
      default:
        lines.push(`${n} ${step.title} (no change)`)
    }
  }
  return lines
}
