import type {StateStore} from '../ports/state-store.js'
import {LeaseObserver} from './liveness.js'
import {lifeAt} from './run-life.js'

/**
 * The run ids a shell offers for RUN: the running ones first, then the rest, each newest first.
 * One look at the journals and locks, with no waiting: a run held on another host whose lease
 * has not been seen to move is not known to run, so it goes with the rest. A journal that cannot
 * be read is still offered (`sluice journal RUN` says what is wrong with it).
 */
export async function runChoices(store: Pick<StateStore, 'runIds' | 'read' | 'locks'>): Promise<string[]> {
  const ids = (await store.runIds()).sort().reverse()
  if (ids.length === 0) return []
  const locks = await store.locks()
  const observer = new LeaseObserver()
  const running = await Promise.all(
    ids.map(async (runId) => {
      try {
        return lifeAt(runId, await store.read(runId), locks, observer).state === 'running'
      } catch {
        return false
      }
    }),
  )
  return [...ids.filter((_, i) => running[i]), ...ids.filter((_, i) => !running[i])]
}
