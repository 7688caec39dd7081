import type {Path} from '../input/problems.js'
import {metricUnits} from '../ports/control-plane.js'
import type {GateData, OnFailure, RunbookData, RunbookInput, StepData} from './schema.js'

// What a loaded runbook is: its steps with every default filled in. The loader (load.ts) makes
// them; the actions, the engine and the live side read them.

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
/** Bake per ramp step or cycle batch when neither the step nor the runbook's defaults give one. */
export const defaultBake = 300

type Resolved<S> = S extends {gate?: GateData} ? Omit<S, 'gate'> & {gate?: Gate} : S
export type StepCommon = {index: number; title: string; onFailure: OnFailure; timeout?: number}

export type FreezeStep = Extract<StepData, {action: 'freeze'}> & StepCommon
export type UnfreezeStep = Extract<StepData, {action: 'unfreeze'}> & StepCommon
export type RestrictStep = Extract<StepData, {action: 'restrict'}> & StepCommon
export type LiftStep = Extract<StepData, {action: 'lift'}> & StepCommon
export type CycleStep = Resolved<Extract<StepData, {action: 'cycle'}>> & StepCommon & {bake: number}
export type RampStep = Omit<Resolved<Extract<StepData, {action: 'ramp'}>>, 'schedule'> & StepCommon & {schedule: number[]; bake: number}
export type ApproveStep = Extract<StepData, {action: 'approve'}> & StepCommon
export type WaitStep = Extract<StepData, {action: 'wait'}> & StepCommon
export type CheckStep = Omit<Extract<StepData, {action: 'check'}>, 'gate'> & StepCommon & {gate: Gate; bake: number}
export type Step = FreezeStep | UnfreezeStep | RestrictStep | LiftStep | CycleStep | RampStep | ApproveStep | WaitStep | CheckStep

export interface Runbook {
  file: string
  name: string
  description: string
  targets: RunbookData['targets']
  rehearsal: RunbookData['rehearsal']
  steps: Step[]
  /** Where a field came from (`file:line:column`), for errors found later, e.g. against a rehearsal scenario. */
  locate: (path: Path) => string
  /** What it was made from, so a journal can tell a resume exactly which runbook to run. */
  source: {kind: 'file'; text: string} | {kind: 'flags'; input: RunbookInput}
}
