import type {Clock} from '../ports/control-plane.js'
import type {RunControls} from '../ports/controls.js'

/**
 * Waits `seconds` with no gate to judge, for a live run with controls: in short slices, so a
 * pause (time paused does not count) or a promote (which ends it early, there being no gate it
 * could skip) takes effect within a second; after a `promote --full` it ends at once. `paused` is awaited while the run is paused, with
 * the seconds left; `did` is what the sender of a promote is told it did.
 */
export async function holdFor(
  seconds: number,
  w: {clock: Clock; signal: AbortSignal; controls: RunControls; paused: (left: number) => Promise<void>; did: (left: number) => string},
): Promise<'done' | 'promoted' | 'interrupted'> {
  const {clock, signal, controls} = w
  let left = seconds
  const promote = controls.listenForPromote(() => w.did(left), signal)
  try {
    while (left > 1e-9) {
      // Taken before the first slice too: after a `promote --full` a hold ends as it starts.
      if (promote.taken()) return 'promoted'
      const started = clock.now()
      await clock.sleep(Math.min(left, 1), signal)
      if (signal.aborted) return 'interrupted'
      if (promote.taken()) return 'promoted'
      if (controls.pausedBy) await w.paused(left)
      else left -= clock.now() - started
      if (signal.aborted) return 'interrupted'
    }
    return 'done'
  } finally {
    promote.release()
  }
}
