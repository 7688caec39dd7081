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
  /** An abort sent by `abort --rollback`: once the run has taken it, the run's next move is back, whoever makes it. */
  rollback?: boolean
  /** A promote sent by `promote --full`: it ends this bake and every later one as each gate passes; approvals still ask. */
  full?: boolean
}

/**
 * What a control did when the running process received it, as its journal entry says: `promoted`
 * when something was waiting for it (an approval, a bake), `nothing waiting` when nothing was.
 */
export type ControlEffect = 'paused' | 'already paused' | 'continued' | 'promoted' | 'promoted fully' | 'nothing waiting' | 'aborting'

/**
 * What a wait listening for a promote is: a bake (or a wait step), which `promote --full` ends
 * ahead of time, or an approval, which only a promote sent while it asks answers.
 */
export type PromoteWait = 'bake' | 'approval'

/** A wait that a promote ends: an approval, a bake. */
export interface PromoteListener {
  /** Resolves with who promoted, or null once released or stopped. */
  readonly promoted: Promise<ControlSender | null>
  /** Whether a promote has been taken by this listener. */
  taken(): boolean
  /** Stops listening: a promote after this is not this wait's. */
  release(): void
}

/**
 * What the engine and the actions see of the controls a live run (or its way back) receives. A
 * rehearsal has none: nobody else can reach a simulated run.
 */
export interface RunControls {
  readonly runId: string
  /** Who paused the run, while it is paused. */
  readonly pausedBy: ControlSender | null
  /** Who sent `promote --full`, once one is taken: every bake from then on ends as soon as its gate passes. */
  readonly fullyPromotedBy: ControlSender | null
  /** Resolves once the run is not paused (at once when it is not), or when the signal aborts. */
  whilePaused(signal: AbortSignal): Promise<void>
  /**
   * Listens for a promote from this instant: the first one that does not continue a pause is this
   * wait's, and the sender is told `did` (evaluated then: "approved step 6", "ended the bake of
   * step 4 early"). A promote with no wait listening is told what the run is doing instead. A
   * bake that starts after a `promote --full` is promoted from its first instant.
   */
  listenForPromote(did: () => string, signal: AbortSignal, waits?: PromoteWait): PromoteListener
  /** What the run is doing now, in words, for a control that finds nothing waiting for it. */
  doing(what: string): void
  /** Every control received, with what it did, for the journal; those received before the call are delivered at once. */
  subscribe(listener: (control: ControlIntent, effect: ControlEffect, did: string) => void): void
}
