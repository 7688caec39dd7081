import {z} from 'zod'
import {limits, maxSecondsText} from './limits.js'

const durationPattern = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/
const unitSeconds: Record<string, number> = {ms: 0.001, s: 1, m: 60, h: 3600}

/** Seconds as a number, or a string with a unit: `90`, `90s`, `5m`, `1h`; at most `max`, however written. */
export function durationUpTo(max: number, maxText = `${max} s`) {
  const seconds = z.number().nonnegative().max(max, `expected at most ${maxText}`)
  return z
    .union([seconds, z.string().regex(durationPattern, 'expected a duration such as 30, 30s, 5m or 1h')])
    .transform((value) => {
      if (typeof value === 'number') return value
      const [, amount, unit] = durationPattern.exec(value)!
      return Number(amount) * unitSeconds[unit]
    })
    .pipe(seconds)
}

/** A runbook's durations: at most a day, however written. */
export const duration = durationUpTo(limits.maxSeconds, maxSecondsText)

/** A count of targets (`3`) or a share of the group (`25%`). */
export const countOrPercent = z
  .union([
    z.number().int().positive(),
    z
      .string()
      .regex(/^\d+(\.\d+)?%$/, 'expected a count such as 3 or a percentage such as 25%')
      .refine((value) => Number(value.slice(0, -1)) > 0 && Number(value.slice(0, -1)) <= 100, 'expected a share above 0% and at most 100%'),
  ])
  .transform((value): {count: number} | {percent: number} => (typeof value === 'number' ? {count: value} : {percent: Number(value.slice(0, -1))}))

export type CountOrPercent = z.output<typeof countOrPercent>

/** Resolves a count-or-percent against a group size; a percentage rounds down but never to zero. */
export function resolveCount(value: CountOrPercent, size: number): number {
  if ('count' in value) return value.count
  return Math.max(1, Math.floor((size * value.percent) / 100))
}

/**
 * Why a batch cannot be taken from a pool of `size` targets, or undefined when it can. Checked
 * wherever the pool's size is known: against a rehearsal's scenario when the runbook is loaded,
 * and live when the cycle starts, before anything is drained.
 */
export function batchBeyondPool(batch: CountOrPercent, size: number): string | undefined {
  if ('count' in batch && batch.count > size) return `expected a batch of at most the pool's ${size} targets, got ${batch.count}`
  return undefined
}

export function describeCount(value: CountOrPercent): string {
  return 'count' in value ? String(value.count) : `${value.percent}%`
}
