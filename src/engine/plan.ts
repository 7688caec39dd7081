import type {RampStep, Runbook, Step} from '../runbook/load.js'
import {describeCount} from '../runbook/units.js'
import type {PlannedStep} from '../ports/io.js'
import {describeGate} from './gate.js'

function gateLine(step: Step): string[] {
  return 'gate' in step && step.gate ? [`gate: ${describeGate(step.gate)}, every ${step.gate.interval} s, ${step.gate.successes} passes in a row; on failure: ${step.onFailure}`] : []
}

function rampLine(step: RampStep, runbook: Runbook): string {
  const others = Object.keys(runbook.targets.dns?.sets ?? {}).filter((s) => s !== step.set)
  return `${step.set} ${step.schedule.map((p) => `${p}%`).join(' → ')} of ${runbook.targets.dns?.record} (the rest to ${others.join(', ')})`
}

function details(step: Step, runbook: Runbook): string[] {
  switch (step.action) {
    case 'freeze':
      return [`record a change freeze: ${step.reason}${step.expires ? ` (expires after ${step.expires} s)` : ''}`]
    case 'unfreeze':
      return ['clear the change freeze']
    case 'restrict': {
      const match = [...step.paths.map((p) => `path ${p}`), ...Object.entries(step.headers).map(([h, v]) => `header ${h}: ${v.join('|')}`)]
      return [`answer ${step.type} requests${match.length ? ` (${match.join(', ')})` : ''} with 503, Retry-After: ${step.retryAfter}`, `on ${runbook.targets.listener}`]
    }
    case 'lift':
      return [`remove the restriction on ${step.type}`]
    case 'cycle':
      return [
        `${step.pool} (${runbook.targets.targetGroups?.[step.pool]}) in batches of ${describeCount(step.batch)}, at most ${describeCount(step.budget ?? step.batch)} out of rotation`,
        ...(step.headroom === undefined ? [] : [`keep ${step.headroom}% headroom at ${step.capacityPerTarget} rps per target`]),
        ...(step.failoverPercent === undefined ? [] : [`set routing failover: below ${step.failoverPercent}% healthy, route to every target`]),
        `drain → ${step.restart ? `restart (${step.restart.command.join(' ')}) → ` : ''}${step.remediate ? `remediate (${step.remediate.command.join(' ')}) → ` : ''}return${step.slowStart !== undefined ? ` with ${step.slowStart} s slow start` : ''}`,
        ...(step.bake > 0 ? [`bake ${step.bake} s per batch`] : []),
        ...gateLine(step),
      ]
    case 'ramp':
      return [rampLine(step, runbook), `bake ${step.bake} s per step`, ...gateLine(step)]
    case 'approve':
      return [`ask: ${step.message}`]
    case 'wait':
      return [`wait ${step.for} s`]
    case 'check':
      return [`watch for ${step.bake} s`, ...gateLine(step)]
  }
}

/** The plan a person sees before anything runs: one entry per step, with what it will do. */
export function planRunbook(runbook: Runbook): PlannedStep[] {
  return runbook.steps.map((step) => ({index: step.index, action: step.action, title: step.title, details: details(step, runbook)}))
}
