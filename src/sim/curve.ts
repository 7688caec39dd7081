/** A piecewise-linear curve's value at t: linear between its [t, value] points, flat past the ends. */
export function rateAt(curve: ReadonlyArray<readonly [number, number]>, t: number): number {
  if (t <= curve[0][0]) return curve[0][1]
  for (let i = 1; i < curve.length; i++) {
    const [t1, r1] = curve[i]
    if (t <= t1) {
      const [t0, r0] = curve[i - 1]
      return r0 + ((r1 - r0) * (t - t0)) / (t1 - t0)
    }
  }
  return curve[curve.length - 1][1]
}
