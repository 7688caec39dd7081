import {availableParallelism} from 'node:os'
import {Worker} from 'node:worker_threads'
import {packResult, resultWidth, runCell, unpackResult, type CellQuery, type CellResult, type SweepJob} from './classify.js'

/**
 * Runs a sweep's cells, in this thread or across worker threads. Either way each result lands at
 * its cell's index, so the answer does not depend on which thread ran what, or when.
 */
export interface CellRunner {
  /** Runs the cells and calls `progress` with how many of them are done so far. */
  run(cells: CellQuery[], progress?: (done: number) => void): Promise<CellResult[]>
  close(): Promise<void>
}

export function defaultWorkers(): number {
  return availableParallelism()
}

/** One thread: no start-up cost, and the baseline the bench compares the pool with. */
export function inThread(job: SweepJob): CellRunner {
  return {
    async run(cells, progress) {
      const out = new Float64Array(cells.length * resultWidth)
      // Progress is reported in the same chunks a pool would use, yielding between them so a progress bar can draw.
      const chunk = chunkSize(cells.length, 1)
      for (let start = 0; start < cells.length; start += chunk) {
        const end = Math.min(cells.length, start + chunk)
        for (let i = start; i < end; i++) packResult(out, i, runCell(job, cells[i]))
        progress?.(end)
        if (progress) await new Promise((resolve) => setImmediate(resolve))
      }
      return cells.map((_, i) => unpackResult(out, i))
    },
    async close() {},
  }
}

/**
 * Chunks small enough that both threads finish together (eight a worker at least) and large enough
 * that a message costs little next to the runs in it.
 */
function chunkSize(cells: number, workers: number): number {
  return Math.max(1, Math.min(64, Math.ceil(cells / (workers * 8))))
}

/**
 * A pool of worker threads, each sent the job once when it starts. The worker module is found next
 * to this one, so it resolves in dist/ after a build as well as anywhere the package is installed.
 */
export function workerPool(job: SweepJob, count: number): CellRunner {
  const url = new URL('./sweep-worker.js', import.meta.url)
  const workers = Array.from({length: count}, () => new Worker(url, {workerData: job}))
  return {
    run(cells, progress) {
      const out = new Float64Array(cells.length * resultWidth)
      const chunk = chunkSize(cells.length, workers.length)
      let next = 0
      let done = 0
      return new Promise((resolve, reject) => {
        const cleanups: Array<() => void> = []
        const finish = (error?: Error): void => {
          for (const off of cleanups) off()
          if (error) reject(error)
          else resolve(cells.map((_, i) => unpackResult(out, i)))
        }
        const send = (worker: Worker): void => {
          if (next >= cells.length) return
          const start = next
          const end = Math.min(cells.length, start + chunk)
          next = end
          const packed = new Float64Array((end - start) * 3)
          for (let i = start; i < end; i++) packed.set([cells[i].setup, cells[i].x, cells[i].y], (i - start) * 3)
          worker.postMessage({id: start, cells: packed}, [packed.buffer])
        }
        for (const worker of workers) {
          const onMessage = (message: {id: number; results: Float64Array}): void => {
            out.set(message.results, message.id * resultWidth)
            done += message.results.length / resultWidth
            progress?.(done)
            if (done === cells.length) return finish()
            send(worker)
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
        for (const worker of workers) send(worker)
      })
    },
    async close() {
      await Promise.all(workers.map((w) => w.terminate()))
    },
  }
}

/** The runner for `--workers N`: this thread for 1, a pool otherwise. */
export function cellRunner(job: SweepJob, workers: number): CellRunner {
  return workers <= 1 ? inThread(job) : workerPool(job, workers)
}
