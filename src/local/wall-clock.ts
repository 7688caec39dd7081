import type {Clock} from '../ports/control-plane.js'

/** Wall time, for live runs. */
export class WallClock implements Clock {
  now(): number {
    return Date.now() / 1000
  }

  sleep(seconds: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted || seconds <= 0) return Promise.resolve()
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer)
        signal?.removeEventListener('abort', done)
        resolve()
      }
      const timer = setTimeout(done, seconds * 1000)
      signal?.addEventListener('abort', done, {once: true})
    })
  }
}
