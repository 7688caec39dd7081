import {describe, expect, it} from 'vitest'
import {normalCdf, normalQuantile, studentCdf, studentQuantile} from '../../src/judge/distributions.js'

// Against published tables (NIST/SEMATECH e-Handbook, 1.3.6.7.1 and 1.3.6.7.2).
describe('the distributions the counts judge needs', () => {
  it('the normal CDF and quantile', () => {
    expect(normalCdf(1.96)).toBeCloseTo(0.975, 5)
    expect(normalCdf(-2.576)).toBeCloseTo(0.005, 5)
    expect(normalQuantile(0.95)).toBeCloseTo(1.6449, 4)
    expect(normalQuantile(0.999)).toBeCloseTo(3.0902, 4)
    expect(normalQuantile(0.001)).toBeCloseTo(-3.0902, 4)
    expect(() => normalQuantile(1)).toThrow(RangeError)
  })

  it("Student's t CDF and quantile, and the normal's as df grows", () => {
    expect(studentQuantile(0.975, 2)).toBeCloseTo(4.303, 3)
    expect(studentQuantile(0.95, 9)).toBeCloseTo(1.833, 3)
    expect(studentQuantile(0.999, 9)).toBeCloseTo(4.297, 3)
    expect(studentQuantile(0.995, 30)).toBeCloseTo(2.75, 2)
    expect(studentCdf(2.262, 9)).toBeCloseTo(0.975, 3)
    expect(studentCdf(-2.262, 9)).toBeCloseTo(0.025, 3)
    expect(studentQuantile(0.999, 1e6)).toBeCloseTo(normalQuantile(0.999), 3)
    expect(studentQuantile(0.999, Infinity)).toBe(normalQuantile(0.999))
  })
})
