import type {SpawnedRun} from './spawned-run.js'

/**
 * How a run ends that should stop before a step; a run that goes on to it instead is killed at
 * once (its bake would hold it for minutes) and the test fails saying so.
 */
export async function stopsBefore(run: SpawnedRun, step: RegExp): Promise<Awaited<SpawnedRun['ended']>> {
  const first = await Promise.race([
    run.ended.then((end) => ({end})),
    run.seen(step).then(
      () => ({reached: true as const}),
      // seen() rejects once the run has ended: then the end has already won the race.
      () => new Promise<never>(() => undefined),
    ),
  ])
  if ('end' in first) return first.end
  run.signal('SIGKILL')
  const end = await run.ended
  throw new Error(`the run went on to ${step} instead of stopping before it:\n${end.stderr}`)
}
