import {parentPort, workerData} from 'node:worker_threads'
import type {JournalRead} from '../ports/state-store.js'
import {predict} from './prediction.js'

// A rehearsal of a run's runbook on a thread of its own (src/serve/prediction.ts, predictApart):
// given the run's start (workerData), it answers with the prediction and ends.

predict(workerData as JournalRead).then(
  (prediction) => parentPort!.postMessage(prediction),
  (error: Error) => parentPort!.postMessage({none: `the rehearsal failed: ${error.message}`}),
)
