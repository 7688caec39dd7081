import {metricUnits} from '../ports/control-plane.js'
import type {GateData} from './schema.js'

/** A gate with every field filled in from the gate, the runbook's defaults and sluice's own. */
export interface Gate {
  metric: GateData['metric']
  threshold: number
  window: number
  interval: number
  failureLimit: number
  inconclusiveLimit: number
  successes: number
  pool?: string
}

/** `error-rate ≤ 1% over 60 s (mailbox)` */
export function describeGate(gate: Gate): string {
  const unit = metricUnits[gate.metric]
  const op = gate.metric === 'healthy-targets' ? '≥' : '≤'
  return `${gate.metric} ${op} ${gate.threshold}${unit === '%' ? '%' : ` ${unit}`} over ${gate.window} s${gate.pool ? ` (${gate.pool})` : ''}`
}

export const gateDefaults = {window: 60, interval: 10, failureLimit: 1, inconclusiveLimit: 3, successes: 3}
