import {expect} from 'vitest'

/**
 * The steps a way back plans onto blue, from what its plan says it measured: a quarter of six
 * healthy targets × `perTarget` against the demand read (420 rps at the mean; drawn, a sample of it).
 */
export function stepsBack(plan: string, perTarget: number): number[] {
  const demand = Number(/against ([\d,]+) rps of demand/.exec(plan)![1].replace(',', ''))
  expect(demand).toBeGreaterThan(380)
  expect(demand).toBeLessThan(460)
  const points = Number(/a quarter of that \((\d+) points\)/.exec(plan)![1])
  // A quarter of the capacity over the demand, rounded down; the demand is printed rounded.
  const exact = ((6 * perTarget) / 4 / demand) * 100
  expect(exact - points).toBeGreaterThan(-0.2)
  expect(exact - points).toBeLessThan(1.2)
  return [...Array.from({length: Math.ceil(100 / points) - 1}, (_, i) => (i + 1) * points), 100]
}
export const stepsText = (steps: number[]) => `in ${steps.length} steps (blue ${steps.map((p) => `${p}%`).join(' → ')})`
