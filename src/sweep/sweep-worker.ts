import {parentPort, workerData} from 'node:worker_threads'
import {packResult, resultWidth, runCell, type SweepJob} from './classify.js'

// A worker thread of a sweep: given the job once (workerData), it runs the chunks of cells it is
// sent, each a Float64Array of [setup, x, y] triples, and answers each with one packed result array.
// A chunk may carry a new job (CellRunner.retarget): it and the chunks after it run on that one.

let job = workerData as SweepJob

parentPort!.on('message', (message: {id: number; cells: Float64Array; job?: SweepJob}) => {
  if (message.job) job = message.job
  const n = message.cells.length / 3
  const out = new Float64Array(n * resultWidth)
  for (let i = 0; i < n; i++) {
    packResult(out, i, runCell(job, {setup: message.cells[i * 3], x: message.cells[i * 3 + 1], y: message.cells[i * 3 + 2]}))
  }
  parentPort!.postMessage({id: message.id, results: out}, [out.buffer])
})
