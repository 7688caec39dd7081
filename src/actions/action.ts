import type {ControlPlane, FreezeRecord, WeightsPort, MetricsPort, RestrictionPort, WeightMap} from '../ports/control-plane.js'
import type {EngineIO, GateResult, GateVerdict, Mutation, MutationKind, RecordedMutation, StepStatus} from '../ports/io.js'
import type {IamStatement} from '../ports/backend.js'
import type {RunControls} from '../ports/controls.js'
import type {PoolPlace} from '../ports/pool-readings.js'
import type {Backend} from '../ports/backend.js'
import type {Path, Problem} from '../input/problems.js'
import type {z} from 'zod'
import {beforeLooks, countsLooks, describeGate, type Gate} from '../runbook/gate.js'
import {requestsNeeded} from '../judge/counts.js'
import type {DefaultsData, GateData, OnFailure, TargetsData} from '../runbook/schema.js'
import type {StepCommon} from '../runbook/step-common.js'

/** What every loaded step is, whatever its action. */
export type AnyStep = StepCommon & {action: string}

/**
 * Everything sluice knows about one kind of step, in one place (its folder): how a runbook writes
 * it, how it runs, what it is called, what it will do, what it locks, which IAM actions it needs,
 * and how each change it records is settled on resume and undone on rollback. The runbook schema,
 * the loader, the plan, preflight, the lock set, iam-policy, resume and rollback all read these
 * definitions (src/actions/registry.ts) and keep no tables of their own.
 */
export interface ActionDefinition<S extends AnyStep = AnyStep, Schema extends z.ZodObject = z.ZodObject> {
  action: S['action']
  /** The step as a runbook writes it: its piece of the runbook schema. */
  schema: Schema
  /** What a failed gate or a timeout does when the step does not say. */
  defaultOnFailure: OnFailure
  /** The step's title when the runbook gives it no name. */
  title(step: S): string
  /** One line per thing the step will do. With `live`, the lines use what preflight read. */
  plan(step: S, context: PlanContext): string[]
  /**
   * What the live system will look like after the step, for the next step's plan: a plan chains
   * before → after across steps (a ramp starts from where the ramp before it ended).
   */
  project?(step: S, live: LiveView): LiveView
  /**
   * Where the live state, as the steps before will leave it, is not what this step takes for
   * granted (a lift of a type nothing restricts, a ramp whose set already has more than its first
   * step): one sentence each, shown in a live plan and before a live run asks. Never a refusal: the
   * step still does what it does on such a state, and the sentence says what that is.
   */
  expects?(step: S, context: Required<PlanContext>): string[]
  /**
   * What makes the step impossible on the live system as it is (a hook naming `{ip}` for targets
   * that have no address), read before anything changes: preflight refuses the run, and
   * `plan --live` the plan, on any, each at the runbook path it is about. A rehearsal's fleet has
   * everything a step can name.
   */
  refusals?(step: S, control: ControlPlane, signal?: AbortSignal): Promise<Problem[]>
  /** Whether it changes the load balancer or DNS, so a live run asks before it starts. */
  changesLive: boolean
  /** What of the control plane it changes, whatever the backend calls it: the weights, a pool, the restrictions. */
  changes?: 'weights' | 'pools' | 'restrictions'
  /**
   * The step's `timeout` is how long the action itself waits (an approval), so it ends the step
   * then with its own outcome; the engine does not also stop it, which would race that outcome.
   */
  endsAtTimeout?: true
  /** The live resources it changes, as lock names: two runs on one of them may not overlap. */
  locks(step: S, targets: TargetsData): string[]
  /** The IAM statements its calls need (gates' metric reads are the metrics source's). */
  iam(step: S, targets: TargetsData): IamStatement[]
  /** How each kind of change it records is settled and undone. */
  mutations: Partial<Record<MutationKind, MutationRules>>
  run(step: S, ctx: ActionContext): Promise<StepOutcome>
  /**
   * The step as it runs, from what the runbook says: defaults filled in and what the schema cannot
   * see checked, each problem given to `ctx.fail` at its path (the loader reports them all at
   * once). Without it, the step runs as written.
   */
  resolve?(raw: z.output<Schema>, ctx: ResolveContext): S
  /** The metrics the step reads (its gate's, and any it shows or guards with), so a metrics source is checked for each before a run. */
  metricsRead?(raw: z.output<Schema>): MetricName[]
  /** The step with every duration it gives times the drill's time scale; counts and thresholds unchanged. Without it, only its timeout scales. */
  scaleTimes?(step: S, scaled: Scaled): S
}

/** A metric a step can read, as the runbook's metrics source names it. */
export type MetricName = GateData['metric'] | 'request-rate'

/** What resolving a step can see of the runbook it is in. */
export interface ResolveContext {
  /** What every step has: its index, title, onFailure, timeout. */
  common: StepCommon
  /** Where the step is in the runbook. */
  path: Path
  fail: (path: Path, message: string) => void
  /** A gate with the runbook's and sluice's defaults filled in, checked. */
  gate: (gate: GateData, path: Path) => Gate
  backend: Backend
  targets: TargetsData
  defaults: DefaultsData
}

/** Seconds on the drill's clock, and a gate's window and interval on it. */
export interface Scaled {
  seconds: (seconds: number) => number
  gate: (gate: Gate) => Gate
}

/** What the plan is made from: what the runbook targets, and what the live system looked like when one was read. */
export interface PlanContext {
  targets: TargetsData
  live?: LiveView
}

/** What preflight read before anything changed, carried forward step by step as the plan goes. */
export interface LiveView {
  weights?: WeightMap
  /** Targets per pool. */
  groupSizes: Map<string, number>
  rulesLabel?: string
  /** The traffic types turned away on the listener. */
  restricted?: string[]
  /** Traffic types with a restriction listed that turns nothing away (restrict replaces it, lift removes it). */
  restrictingNothing?: string[]
  /** The change freeze in place (null: none); undefined where it could not be read. */
  freeze?: FreezeRecord | null
  /** Who plans: a freeze in place may be its own (a resumed run's, an operator's by hand). */
  planner?: {runId?: string; operator: string; byHand?: boolean}
  /** Per paced ramp (by step index), what it would do if it started now (src/pacing). */
  pacedNow?: Map<number, string>
  /** Per counts-judged step (by index), how many requests its bake would hold at the demand now, beside what the judge needs (src/live/counts-now.ts). */
  countsNow?: Map<number, string>
}

/** One change that puts a piece of live state back, as rollback shows and records it. */
export interface Undo {
  kind: MutationKind
  resource: string
  describe: string
  before: unknown
  after: unknown
  apply(): Promise<void>
  /** Sets the resource to a state between `before` and `after`: a weights undo taken in steps. */
  applyStep?(state: unknown): Promise<void>
}

export interface MutationRules {
  /** The piece of live state the change touches: a run's changes to one subject net out in a rollback. */
  subject(m: Mutation): string
  /**
   * Whether a change whose outcome was never recorded took effect, read from the live system:
   * 'applied', 'not applied', or null when the state matches neither side.
   */
  settle(m: Mutation, control: ControlPlane): Promise<'applied' | 'not applied' | null>
  /**
   * The undo of one subject's net change; `changes` are oldest first and the newest is of this
   * kind. When there is nothing to undo, why not, in words rollback shows (a net-zero change, or
   * live state that is no longer the run's to touch).
   */
  undo(changes: RecordedMutation[], control: ControlPlane): Promise<Undo | string>
  /**
   * Whether the live state still is what the run left of this subject (`changes` oldest first,
   * the newest of this kind), for a resume and for `status --run`: null when it is, else what the
   * journal says against what is there now, and the changes that would put it back. Something a
   * person or a restart changed since is drift; something nobody can own (another's freeze) is not.
   */
  drift(changes: RecordedMutation[], control: ControlPlane): Promise<Drift | null>
}

/** What a run left of one subject, against what is there now, and how to put it back. */
export interface Drift {
  subject: string
  /** What the journal says the run left, in words. */
  left: string
  /** What is there now, in words. */
  now: string
  /** The changes that put back what the run left (`sluice resume --reapply`). */
  reapply: Undo[]
  /** The state there now, where a rollback can plan from it instead (`sluice rollback --from-live`): weights. */
  live?: unknown
}

/** What an action gets to do its work: the ports, the person, and the run's stop signal. */
export interface ActionContext {
  control: ControlPlane
  io: EngineIO
  signal: AbortSignal
  /** Titles of the steps so far, for an approval to show. */
  history: string[]
  /** When this step is being resumed: the changes the interrupted run had already made in it. */
  resumed?: ResumedMutation[]
  /** The controls of a live run (`sluice pause`, `promote`, `abort`); a rehearsal has none. */
  controls?: RunControls
  /** Whether the run was started with this step approved in advance (`--approve STEP`). */
  preApproved: boolean
  /** A safe point: while the run is paused it holds here, saying where and who paused it; resolves at once otherwise, or when the run stops. */
  checkpoint(where: string): Promise<void>
  /**
   * Waits `seconds` with no gate to judge (a wait step, a bake without a gate). Time paused does
   * not count; a promote ends it early, since there is no gate it could skip. Says how it ended.
   */
  hold(seconds: number, where: string): Promise<'done' | 'promoted' | 'interrupted'>
  progress(message: string): void
  /** Records where an assess step placed a pool on its map, in numbers, for the journal and the page. */
  placed(pool: string, place: PoolPlace): void
  warn(message: string): void
  /** Reports a verdict an action reached on its own (not through watch). */
  verdict(verdict: GateVerdict): void
  /**
   * Announces a change (intent), makes it, and reports the outcome, so a journal can account for
   * it; `report` says what the change reported of itself (in words, and what it brought into
   * being), for the outcome.
   */
  change<T>(kind: MutationKind, resource: string, before: unknown, after: unknown, apply: () => Promise<T>, report?: (value: T) => ChangeReport): Promise<T>
  /** Watches a gate through a bake, reporting each verdict. */
  watch(gate: Gate, bake: number, context: string): Promise<GateResult>
  weights(): WeightsPort
  restrictions(): RestrictionPort
  metrics(): MetricsPort
}

/** What a change reports of itself on its outcome (Mutation.note, Mutation.produced). */
export interface ChangeReport {
  note?: string
  produced?: string[]
}

/** A change an earlier run made, with its recorded outcome. */
export type ResumedMutation = Mutation & {
  /** `found`: the outcome was not recorded but read from the live system on resume (src/live/recovery.ts). */
  outcome?: {ok: boolean; found?: string; produced?: string[]}
  /** When the intent was recorded (ISO), where the journal says. */
  at?: string
}

export interface StepOutcome {
  status: StepStatus
  message: string
  verdicts?: GateVerdict[]
}

/**
 * The status of a step whose gate failed, given what the step's onFailure asked for. A gate whose
 * source could not be read measured nothing: the run failed (an error), it was not judged.
 */
export function gateFailedStatus(step: Pick<StepCommon, 'onFailure'>, result: GateResult): StepStatus {
  if (result.sourceError !== undefined) return 'error'
  return step.onFailure === 'hold' ? 'held' : 'failed'
}

/** The outcome of a step whose gate failed, given what the step's onFailure asked for. */
export function gateFailure(step: Pick<StepCommon, 'onFailure'>, result: GateResult, undone: string): StepOutcome {
  return {status: gateFailedStatus(step, result), message: `${result.reason}; ${undone}`, verdicts: result.verdicts}
}

/** The plan line of a step's gate, if it has one. */
export function gatePlan(step: AnyStep & {gate?: Gate}): string[] {
  const gate = step.gate
  if (!gate) return []
  if (gate.judge === 'counts') {
    const bake = 'bake' in step ? Number(step.bake) : 0
    const question = {marginPoints: gate.threshold, confidence: gate.confidence / 100, looks: countsLooks(gate, bake)}
    const needed = (baselineRate: number, share: number) => requestsNeeded({baselineRate, share, ...question})
    const n = (x: number) => x.toLocaleString('en-US')
    const pool = gate.pool ?? 'the pool'
    const apart = `to tell ${gate.threshold} point${gate.threshold === 1 ? '' : 's'} apart it needs about`
    const judged = `gate: ${describeGate(gate)}, on every ${gate.interval} s interval of the bake together; holds if it cannot tell by ${gate.inconclusiveLimit} intervals after the bake; on failure: ${step.onFailure}`
    if (gate.baseline === 'before') {
      // The pool's own traffic before and after: the baseline holds window / bake of the bake's requests.
      const ratio = gate.window / Math.max(bake, gate.interval)
      const before = (baselineRate: number) => requestsNeeded({baselineRate, baselineRatio: ratio, baselineIntervals: beforeLooks(gate), ...question})
      return [
        `${judged}; first watches ${pool} for ${gate.window} s ${beforeEach(step, gate)}, its baseline`,
        `${apart} ${n(before(1))} requests on ${pool} over the bake at a 1% baseline, at the same rate before the change as after (${n(before(0.1))} at 0.1%)`,
      ]
    }
    return [
      judged,
      `${apart} ${n(needed(1, 0.1))} requests on ${pool} over the bake at a 1% baseline with a tenth of the traffic (${n(needed(0.1, 0.1))} at 0.1%; ${n(needed(1, 0.5))} with half)`,
    ]
  }
  return [
    `gate: ${describeGate(gate)}, every ${gate.interval} s, ${gate.successes} passes in a row${gate.consecutiveFailures ? `; fails at ${gate.consecutiveFailures} failed verdicts in a row` : ''}; on failure: ${step.onFailure}`,
  ]
}

/**
 * Which changes a gate relative to before watches ahead of, with the time that adds where the
 * plan can know it: a ramp watches before each of its shares, a cycle before each batch.
 */
function beforeEach(step: AnyStep, gate: Gate): string {
  const looks = beforeLooks(gate)
  if ('pace' in step && step.pace) return `before each of its changes (${looks} intervals each, ${gate.window} s more for each; the pace decides how many)`
  const points = 'schedule' in step && Array.isArray(step.schedule) ? step.schedule.length : 1
  if (points > 1) return `before each of its ${points} changes (${looks} intervals each; ${points * gate.window} s in all)`
  if (step.action === 'cycle') return `before each batch (${looks} intervals each, ${gate.window} s more for each batch)`
  return `before the change (${looks} intervals)`
}

/** Whether two recorded states are the same, whatever the order of their keys and lists. */
export function sameState(a: unknown, b: unknown): boolean {
  return JSON.stringify(sortKeys(a)) === JSON.stringify(sortKeys(b))
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return [...(v as unknown[])].map(sortKeys).sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y)))
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.entries(v)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, x]) => [k, sortKeys(x)]),
    )
  return v
}
