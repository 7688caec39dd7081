import {availableParallelism} from 'node:os'
import {Worker} from 'node:worker_threads'
import {programFile} from '../program-file.js'
import {packResult, resultWidth, runCell, unpackResult, type CellQuery, type CellResult, type SweepJob} from './classify.js'

/**
 * Runs a sweep's cells on this thread and, for more than one worker, on worker threads beside it.
 * Each result lands at its cell's index, so the answer does not depend on which thread ran a cell,
 * or when: `--workers 1` and `--workers 2` give the same bytes.
 */
export interface CellRunner {
  /** Runs the cells and calls `progress` with how many of them are done so far. */
  run(cells: CellQuery[], progress?: (done: number) => void): Promise<CellResult[]>
  /**
   * Runs later cells on another job, on the same threads: a worker is sent the new job with its
   * next chunk. For many small sweeps in a row (assess), where starting threads for each would
   * cost more than the cells.
   */
  retarget(job: SweepJob): void
  close(): Promise<void>
}

export function defaultWorkers(): number {
  return availableParallelism()
}

/**
 * Chunks small enough that every thread finishes at about the same time (eight a worker at least,
 * and some 50 ms of work at the simulator's tens of millions of server-ticks a second) and large
 * enough that a message costs little next to the runs in it.
 */
function chunkSize(cells: number, workers: number, job: SweepJob): number {
  const serverTicks = job.scenario.pools.reduce((n, p) => n + (p.servers ?? 0), 0) * (job.scenario.duration / job.scenario.tick)
  return Math.max(1, Math.min(64, Math.ceil(cells / (workers * 8)), Math.ceil(1.5e6 / Math.max(1, serverTicks))))
}

/** Chunks each worker thread holds at once: one to run and one queued, so it never waits for this thread to hand out the next. */
const inFlight = 2

/**
 * `workers` threads in all: this one, which already has the simulator loaded and warm, and
 * `workers - 1` worker threads, each sent the job once when it starts (the worker module: programFile).
 */
export function cellRunner(first: SweepJob, workers: number): CellRunner {
  const url = programFile('sweep/sweep-worker.js')
  const threads = Array.from({length: Math.max(0, workers - 1)}, () => new Worker(url, {workerData: first}))
  let job = first
  // Which job each worker holds: it is sent the current one with its next chunk when they differ.
  const holds = new Map<Worker, SweepJob>(threads.map((w) => [w, first]))
  return {
    retarget(next) {
      job = next
    },
    run(cells, progress) {
      const out = new Float64Array(cells.length * resultWidth)
      const chunk = chunkSize(cells.length, threads.length + 1, job)
      let next = 0
      let done = 0
      let settled = false
      return new Promise((resolve, reject) => {
        const cleanups: Array<() => void> = []
        const finish = (error?: Error): void => {
          if (settled) return
          settled = true
          for (const off of cleanups) off()
          if (error) reject(error)
          else resolve(cells.map((_, i) => unpackResult(out, i)))
        }
        const take = (): [number, number] | undefined => {
          if (next >= cells.length) return undefined
          const range: [number, number] = [next, Math.min(cells.length, next + chunk)]
          next = range[1]
          return range
        }
        const completed = (count: number): void => {
          done += count
          progress?.(done)
          if (done === cells.length) finish()
        }
        const send = (worker: Worker): void => {
          const range = take()
          if (!range) return
          const [start, end] = range
          const packed = new Float64Array((end - start) * 3)
          for (let i = start; i < end; i++) packed.set([cells[i].setup, cells[i].x, cells[i].y], (i - start) * 3)
          const stale = holds.get(worker) !== job
          holds.set(worker, job)
          worker.postMessage({id: start, cells: packed, ...(stale ? {job} : {})}, [packed.buffer])
        }
        for (const worker of threads) {
          const onMessage = (message: {id: number; results: Float64Array}): void => {
            out.set(message.results, message.id * resultWidth)
            send(worker)
            completed(message.results.length / resultWidth)
          }
          const onError = (error: Error): void => finish(error)
          const onExit = (code: number): void => finish(new Error(`a sweep worker stopped (exit ${code}) before its cells were done`))
          worker.on('message', onMessage)
          worker.on('error', onError)
          worker.on('exit', onExit)
          cleanups.push(() => {
            worker.off('message', onMessage)
            worker.off('error', onError)
            worker.off('exit', onExit)
          })
        }
        if (cells.length === 0) return finish()
        for (let k = 0; k < inFlight; k++) for (const worker of threads) send(worker)
        // This thread takes chunks too, yielding between them so workers' answers and a progress bar get through.
        const local = async (): Promise<void> => {
          for (let range = take(); range && !settled; range = take()) {
            for (let i = range[0]; i < range[1]; i++) packResult(out, i, runCell(job, cells[i]))
            completed(range[1] - range[0])
            await new Promise((resume) => setImmediate(resume))
          }
        }
        local().catch((error: Error) => finish(error))
      })
    },
    async close() {
      await Promise.all(threads.map((w) => w.terminate()))
    },
  }
}
