import type {Clock} from '../ports/control-plane.js'
import type {Fleet} from './fleet.js'

interface Sleeper {
  wake: number
  resolve: () => void
}

/**
 * Virtual time for a rehearsal: the fleet only moves when everything in the run is waiting.
 * Concurrent sleeps (hooks for a whole batch at once) are woken in time order, so each sees
 * the fleet at its own wake-up time. With `pace`, virtual seconds pass at that many per wall
 * second, so a person can watch a rehearsal and interrupt it.
 */
export class VirtualClock implements Clock {
  private sleepers: Sleeper[] = []
  private pumping = false

  constructor(
    private readonly fleet: Fleet,
    private readonly pace: number | null = null,
  ) {}

  now(): number {
    return this.fleet.time
  }

  sleep(seconds: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.resolve()
    return new Promise((done) => {
      const onAbort = () => this.wakeEarly(sleeper)
      const sleeper: Sleeper = {
        wake: this.now() + Math.max(0, seconds),
        resolve: () => {
          signal?.removeEventListener('abort', onAbort)
          done()
        },
      }
      this.sleepers.push(sleeper)
      signal?.addEventListener('abort', onAbort, {once: true})
      if (!this.pumping) {
        this.pumping = true
        // Let every sleeper started in this turn register before time moves.
        setImmediate(() => void this.pump())
      }
    })
  }

  private wakeEarly(sleeper: Sleeper): void {
    const at = this.sleepers.indexOf(sleeper)
    if (at >= 0) this.sleepers.splice(at, 1)
    sleeper.resolve()
  }

  private async pump(): Promise<void> {
    while (this.sleepers.length > 0) {
      this.sleepers.sort((a, b) => a.wake - b.wake)
      const next = this.sleepers[0].wake
      if (next > this.fleet.ticks * this.fleet.dt) this.fleet.extendTo(next + 600)
      if (this.pace === null) {
        this.fleet.runUntil(next)
      } else {
        while (this.fleet.time < next - 1e-9 && this.sleepers.length > 0) {
          this.fleet.step()
          await new Promise((r) => setTimeout(r, (1000 * this.fleet.dt) / this.pace!))
        }
      }
      const due = this.sleepers.filter((s) => s.wake <= this.fleet.time + 1e-9)
      this.sleepers = this.sleepers.filter((s) => s.wake > this.fleet.time + 1e-9)
      for (const s of due) s.resolve()
      // Woken sleepers may sleep again at once; give them a turn before moving on.
      await new Promise((r) => setImmediate(r))
    }
    this.pumping = false
  }
}
