/**
 * Controls an operator sends a running live run from any terminal (`sluice pause`, `promote`,
 * `abort`), as Argo Rollouts' plugin does: each is an intent written to the state store, and the
 * running process acts on it at its next safe point.
 */
export const controlKinds = ['pause', 'promote', 'abort'] as const
export type ControlKind = (typeof controlKinds)[number]

/** Who sent a control, and from where. */
export interface ControlSender {
  operator: string
  host: string
  pid: number
}

/** One control as the store keeps it: numbered per run, one after another. */
export interface ControlIntent extends ControlSender {
  seq: number
  kind: ControlKind
  /** ISO 8601, by the sender's clock. */
  at: string
}

/** What a control did when the running process received it, as its journal entry says. */
export type ControlEffect = 'paused' | 'already paused' | 'continued' | 'promoted' | 'aborting'

/**
 * What the engine and the actions see of the controls a live run receives. A rehearsal has none:
 * nobody else can reach a simulated run.
 */
export interface RunControls {
  readonly runId: string
  /** Who paused the run, while it is paused. */
  readonly pausedBy: ControlSender | null
  /** How many promotes have arrived that did not continue a paused run: a bake or an approval started before one ends early. */
  readonly promotions: number
  /** Resolves once the run is not paused (at once when it is not), or when the signal aborts. */
  whilePaused(signal: AbortSignal): Promise<void>
  /** Resolves with who sent the next promote after this call (one that did not just continue a pause), or null if the signal aborts first. */
  nextPromote(signal: AbortSignal): Promise<ControlSender | null>
  /** Every control received, with what it did, for the journal; those received before the call are delivered at once. */
  subscribe(listener: (control: ControlIntent, effect: ControlEffect) => void): void
}
