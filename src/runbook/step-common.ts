import type {Gate} from './gate.js'
import type {GateData, OnFailure} from './schema.js'

// What every step has once it is loaded, whatever its action: each action's folder says the rest.

export type StepCommon = {index: number; title: string; onFailure: OnFailure; timeout?: number}

/** A step as written, with its gate (if it has one) filled in from the runbook's and sluice's defaults. */
export type Resolved<S> = S extends {gate?: GateData} ? Omit<S, 'gate'> & {gate?: Gate} : S

/** Bake per ramp step or cycle batch when neither the step nor the runbook's defaults give one. */
export const defaultBake = 300
