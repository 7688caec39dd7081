import {z} from 'zod'

const durationPattern = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/
const unitSeconds: Record<string, number> = {ms: 0.001, s: 1, m: 60, h: 3600}

/** Seconds as a number, or a string with a unit: `90`, `90s`, `5m`, `1h`. */
export const duration = z
  .union([z.number().nonnegative(), z.string().regex(durationPattern, 'expected a duration such as 30, 30s, 5m or 1h')])
  .transform((value) => {
    if (typeof value === 'number') return value
    const [, amount, unit] = durationPattern.exec(value)!
    return Number(amount) * unitSeconds[unit]
  })

/** A count of targets (`3`) or a share of the group (`25%`). */
export const countOrPercent = z
  .union([z.number().int().positive(), z.string().regex(/^\d+(\.\d+)?%$/, 'expected a count such as 3 or a percentage such as 25%')])
  .transform((value): {count: number} | {percent: number} =>
    typeof value === 'number' ? {count: value} : {percent: Number(value.slice(0, -1))},
  )

export type CountOrPercent = z.output<typeof countOrPercent>

/** Resolves a count-or-percent against a group size; a percentage rounds down but never to zero. */
export function resolveCount(value: CountOrPercent, size: number): number {
  if ('count' in value) return value.count
  return Math.max(1, Math.floor((size * value.percent) / 100))
}

export function describeCount(value: CountOrPercent): string {
  return 'count' in value ? String(value.count) : `${value.percent}%`
}
