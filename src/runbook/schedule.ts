import {z} from 'zod'
import type {Path} from '../input/problems.js'
import {limits} from './limits.js'

// The weights a ramp steps through, as a runbook writes them and as they run.

export const scheduleSchema = z
  .union([
    z.array(z.number()).min(1).max(limits.maxScheduleSteps).describe('The weights in %, in order, e.g. [1, 5, 25, 50, 100].'),
    z
      .strictObject({
        linear: z
          .strictObject({
            from: z.number().describe('The first weight in %.'),
            to: z.number().describe('The last weight in %.'),
            steps: z.number().int().min(2).max(limits.maxScheduleSteps).describe('How many weights, evenly spaced, from and to included.'),
          })
          .describe('Evenly spaced weights.'),
      })
      .describe('Evenly spaced weights.'),
    z
      .strictObject({
        exponential: z
          .strictObject({
            from: z.number().describe('The first weight in %, above 0.'),
            factor: z.number().gt(1).describe('Each weight is the one before times this, until `to`.'),
            to: z.number().describe('The last weight in %.'),
          })
          .describe('Weights that grow by a factor.'),
      })
      .describe('Weights that grow by a factor.'),
  ])
  .describe('The weights in % the ramped set steps through: a list, or linear or exponential steps.')

export type ScheduleData = z.output<typeof scheduleSchema>

/** Turns a schedule into the list of percentages the ramp steps through. */
export function expandSchedule(schedule: ScheduleData, path: Path, fail: (p: Path, m: string) => void): number[] {
  let steps: number[]
  if (Array.isArray(schedule)) {
    steps = schedule
  } else if ('linear' in schedule) {
    const {from, to, steps: n} = schedule.linear
    steps = Array.from({length: n}, (_, i) => from + ((to - from) * i) / (n - 1))
  } else {
    const {from, factor, to} = schedule.exponential
    // Returning here also keeps the loop below from multiplying zero for ever.
    if (from <= 0) {
      fail([...path, 'exponential', 'from'], `expected a start above 0 %, got ${from}`)
      return []
    }
    // Counted before any is made: a factor just above 1 would make billions.
    const count = to > from ? Math.ceil(Math.log(to / from) / Math.log(factor)) + 1 : 1
    if (count > limits.maxScheduleSteps) {
      fail(
        [...path, 'exponential', 'factor'],
        `expected at most ${limits.maxScheduleSteps} steps, but a factor of ${factor} from ${from}% to ${to}% makes ${count}`,
      )
      return []
    }
    steps = []
    for (let p = from; p < to; p *= factor) steps.push(p)
    steps.push(to)
  }
  steps.forEach((p, i) => {
    const at = Array.isArray(schedule) ? [...path, i] : path
    if (p > 100) fail(at, `expected a weight of at most 100%, got ${p}%`)
    if (p < 1) fail(at, `expected a weight of at least 1%, got ${p}%`)
  })
  // Route 53 weights are whole numbers; the ramped set gets p and the others share 100 − p.
  steps = steps.map((p) => Math.round(p))
  steps.forEach((p, i) => {
    const at = Array.isArray(schedule) ? [...path, i] : path
    if (i > 0 && p <= steps[i - 1]) fail(at, `expected each step above the one before, got ${p}% after ${steps[i - 1]}%`)
  })
  return steps
}
