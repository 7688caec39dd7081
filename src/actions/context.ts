import type {ControlPlane, DnsPort, MetricsPort, TrafficRulesPort} from '../ports/control-plane.js'
import type {EngineIO, GateVerdict, Mutation, StepStatus} from '../ports/io.js'
import type {GateResult} from '../engine/gate.js'
import type {Gate, Step} from '../runbook/load.js'

/** What an action gets to do its work: the ports, the person, and the run's stop signal. */
export interface ActionContext {
  control: ControlPlane
  io: EngineIO
  signal: AbortSignal
  /** Titles of the steps so far, for an approval to show. */
  history: string[]
  /** When this step is being resumed: the changes the interrupted run had already made in it. */
  resumed?: ResumedMutation[]
  progress(message: string): void
  warn(message: string): void
  /** Reports a verdict an action reached on its own (not through watch). */
  verdict(verdict: GateVerdict): void
  /** Announces a change (intent), makes it, and reports the outcome, so a journal can account for it. */
  change<T>(kind: string, resource: string, before: unknown, after: unknown, apply: () => Promise<T>): Promise<T>
  /** Watches a gate through a bake, reporting each verdict. */
  watch(gate: Gate, bake: number, context: string): Promise<GateResult>
  dns(): DnsPort
  rules(): TrafficRulesPort
  metrics(): MetricsPort
}

/** A change an earlier run made, with its recorded outcome. */
export type ResumedMutation = Mutation & {outcome?: {ok: boolean}}

export interface StepOutcome {
  status: StepStatus
  message: string
  verdicts?: GateVerdict[]
}

export type Action<S extends Step> = (step: S, ctx: ActionContext) => Promise<StepOutcome>

/** The outcome of a step whose gate failed, given what the step's onFailure asked for. */
export function gateFailure(step: Step, result: GateResult, undone: string): StepOutcome {
  const status = step.onFailure === 'hold' ? 'held' : 'failed'
  return {status, message: `${result.reason}; ${undone}`, verdicts: result.verdicts}
}
