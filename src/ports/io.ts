import type {Outcome} from '../errors.js'
import type {MetricKind, Reading} from './control-plane.js'
import type {ControlEffect, ControlIntent} from './controls.js'
import type {PoolPlace} from './pool-readings.js'

/** One gate measurement: what was measured, against what, and the verdict. */
export interface GateVerdict {
  /** The step it belongs to. */
  step: number
  /** e.g. "error-rate ≤ 1% over 60 s (mailbox)" */
  gate: string
  metric: MetricKind
  /** null: no data in the window, which is inconclusive and never a pass. */
  value: number | null
  /** The gate's threshold as written: an absolute value, or a relative gate's points or ratio. */
  threshold: number
  unit: string
  outcome: 'pass' | 'fail' | 'inconclusive'
  /** Requests in the window, where the source counts them (journals before minRequests have none). */
  requests?: number | null
  /** What the value was compared with: the threshold, or a relative gate's baseline moved by it; null when nothing was. */
  bound?: number | null
  /** A relative gate's baseline: what it is (`before the step`, `pool legacy`), its value and its requests. */
  baseline?: {of: string; value: number | null; requests: number | null}
  /** Why a verdict is inconclusive: no data, too few requests, no baseline. */
  why?: string
  /** A counts verdict in words with its numbers (src/judge/counts.ts countsSentence), which the terminal and journal show as it is. */
  said?: string
  /** A counts verdict's numbers: how sure it is, how sure it needed to be (%), and how much the windows vary beyond a binomial. */
  counts?: {sure: number; needs: number; dispersion: number; baselineDispersion: number; margin: number}
  /** Clock seconds at which it was taken. */
  at: number
  /** What the step was doing: "ramp 25%", "batch 2 of 5". */
  context: string
}

export interface PlannedStep {
  index: number
  action: string
  title: string
  /** One line per thing the step will do, for the plan display. */
  details: string[]
  /** In a live plan: where what is there now is not what the step takes for granted (ActionDefinition.expects). */
  drift?: string[]
  /** In a live plan: what the step changes that the plan did not read, so it cannot say the step finds what it expects. */
  unread?: string[]
}

/**
 * The kinds of change a run records. Each belongs to one action module (src/actions), which says
 * how it is settled on resume and undone on rollback; the registry refuses a kind with no owner.
 */
export const mutationKinds = [
  'weights',
  'pool-weights',
  'deregister',
  'register',
  'restart',
  'remediate',
  'replace',
  'failover',
  'slow-start',
  'restrict',
  'lift',
  'restriction-share',
  'freeze',
  'unfreeze',
] as const
export type MutationKind = (typeof mutationKinds)[number]

/** A change to the control plane, announced before (intent) and after (outcome) it is made. */
export interface Mutation {
  step: number
  phase: 'intent' | 'outcome'
  kind: MutationKind
  resource: string
  before?: unknown
  after?: unknown
  ok?: boolean
  error?: string
  /** What a change that worked reports of itself (an SSM command's id, status and output), on its outcome. */
  note?: string
  /** What a change that worked brought into being, on its outcome: an ECS replacement's new targets. */
  produced?: string[]
}

/** A change as a journal holds it: its intent, with the outcome when one was recorded. */
export interface RecordedMutation extends Mutation {
  seq: number
  at: string
  /** Missing when the run died between the intent and the outcome. */
  outcome?: {ok: boolean; error?: string; found?: string; note?: string; produced?: string[]}
}

export type StepStatus = 'done' | 'failed' | 'held' | 'refused' | 'interrupted' | 'error' | 'skipped'

export type RunEvent =
  | {type: 'plan'; runbook: string; steps: PlannedStep[]; runId?: string}
  | {type: 'step-start'; step: number; title: string; at: number}
  | {type: 'progress'; step: number; message: string; at: number}
  /** The step holds from `at` for `seconds` (a bake, a wait); said again with what is left when a pause ends. */
  | {type: 'bake'; step: number; seconds: number; at: number}
  | {type: 'verdict'; verdict: GateVerdict}
  | {type: 'mutation'; mutation: Mutation; at: number}
  | {type: 'warning'; step?: number; message: string}
  | {type: 'step-end'; step: number; status: StepStatus; message: string; at: number}
  | {type: 'run-end'; outcome: RunOutcome; message: string}
  | {type: 'control'; control: ControlIntent; effect: ControlEffect; did?: string}
  /** An assess step placed a pool on its map: the numbers behind its sentences. */
  | {type: 'placement'; step: number; pool: string; place: PoolPlace; at: number}
  /**
   * A gate relative to before measured its baseline, before the change it judges: journalled, so
   * that a resume that finds the change made judges the bake against it, not against the pool as
   * it is after the change.
   */
  | {type: 'baseline'; step: number; baseline: BaselineTaken; at: number}

/** A before-the-change baseline: the threshold judge's one reading of the window, or the counts judge's intervals. */
export type BaselineTaken = {reading: Reading} | {intervals: Array<{requests: number; errors: number}>}

/** How a run ended; every outcome but bad input, which stops a run before it starts. */
export type RunOutcome = Exclude<Outcome, 'bad-input'>

/**
 * The engine's only way to reach a person: events out, questions in. The terminal adapter
 * (listr2, inquirer) and the tests' recording fake implement it; the engine imports neither.
 */
export interface EngineIO {
  notify(event: RunEvent): void
  /**
   * Asks a yes/no question with what the person needs to decide. Resolves true or false; throws
   * RefusedError when nobody can answer (no TTY and no --yes).
   */
  confirm(question: string, context: string[]): Promise<boolean>
  /**
   * Asks the person at this terminal, if one can answer (--yes never does): a live run's approval.
   * Resolves null when nobody can answer here, or when the signal aborts (someone answered elsewhere).
   */
  ask?(question: string, context: string[], signal: AbortSignal): Promise<boolean | null>
}

/** How a gate's watch through a bake ended. */
export interface GateResult {
  /** held: a counts gate that could not tell either way by the end of its looks; the step holds where it is, undoing nothing. */
  outcome: 'pass' | 'fail' | 'interrupted' | 'held'
  verdicts: GateVerdict[]
  /** Why it failed, in a sentence that names the gate, the value and the threshold (or the source). */
  reason?: string
  failing?: GateVerdict
  /**
   * Set when the gate failed because its metrics source could not be read (an error or a
   * timeout): not a measurement, so the run failed (exit 1) rather than judged (exit 3). The
   * outcome is still 'fail', so every action handles it as it handles a failed gate.
   */
  sourceError?: string
}
