import {describe, expect, it} from 'vitest'
import {drillWindowSeconds, fullServiceSince, reportCard, type Timeline} from '../../src/drill/report-card.js'

/** A timeline of one point a second for `seconds`, each point from `at(t)`. */
function line(seconds: number, at: (t: number) => {demand?: number; served: number; inRotation?: number}): Timeline {
  const points = Array.from({length: seconds}, (_, t) => at(t))
  return {
    t: Float64Array.from(points, (_, t) => t),
    demand: Float64Array.from(points, (p) => p.demand ?? 100),
    served: Float64Array.from(points, (p) => p.served),
    inRotation: Float64Array.from(points, (p) => p.inRotation ?? 4),
  }
}

const fault = {from: 20, to: 40, servers: 1}
const inFault = (t: number) => t >= 20 && t < 40

describe('reportCard', () => {
  it('reads the fault window, the loss and the fewest servers in rotation exactly, and ignores unread counts', () => {
    const timeline = line(60, (t) => ({
      served: inFault(t) ? 75 : 100,
      // HAProxy took the broken server out two seconds in; some seconds were not read at all.
      inRotation: t < 3 || t === 30 ? Number.NaN : t >= 22 && t < 41 ? 3 : 4,
    }))
    const card = reportCard(timeline, fault, 4)
    expect(card.servedDuringFault).toBe(75)
    // 20 s short by 25 of 6,000 requests.
    expect(card.lostPercent).toBeCloseTo((20 * 25 * 100) / 6000, 10)
    expect(card.fewestInRotation).toBe(3)
    // Three left is what one broken server leaves: no cascade.
    expect(card.cascaded).toBe(false)
    expect(card.before).toBe(1)
    // The first full 10 s window starts at the fix.
    expect(card.recovered).toBe(true)
    expect(card.secondsToFullServiceAfterFix).toBe(0)
  })

  it('calls it a cascade when fewer servers stay in rotation than the fault left', () => {
    const timeline = line(60, (t) => ({served: inFault(t) ? 40 : 100, inRotation: t === 30 ? 2 : 4}))
    const card = reportCard(timeline, fault, 4)
    expect(card.fewestInRotation).toBe(2)
    expect(card.cascaded).toBe(true)
    expect(card.servedDuringFault).toBe(40)
  })

  it('without a fault: no served-during-fault, no cascade, measured against full service', () => {
    const timeline = line(30, () => ({served: 100, inRotation: 1}))
    const card = reportCard(timeline, null, 4)
    expect(card.servedDuringFault).toBeNull()
    expect(card.cascaded).toBe(false)
    expect(card.lostPercent).toBe(0)
    expect(card.before).toBe(1)
    expect(card.recovered).toBe(true)
  })

  it('never counts more served than demand as a negative loss', () => {
    const card = reportCard(
      line(30, () => ({served: 120})),
      null,
      4,
    )
    expect(card.lostPercent).toBe(0)
  })

  it('counts the seconds from the fix to full service when service dips after it', () => {
    // Back at the fix, then a dip from 45 s to 49 s, full again from 50 s.
    const timeline = line(80, (t) => ({served: inFault(t) || (t >= 45 && t < 50) ? 50 : 100}))
    const card = reportCard(timeline, fault, 4)
    expect(card.recovered).toBe(true)
    expect(card.secondsToFullServiceAfterFix).toBe(10)
  })

  it('is not recovered when service never comes back', () => {
    const timeline = line(80, (t) => ({served: t >= 20 ? 60 : 100}))
    const card = reportCard(timeline, fault, 4)
    expect(card.recovered).toBe(false)
    expect(card.secondsToFullServiceAfterFix).toBeNull()
  })

  it("reads full service against the run's own share before the fault, leaving out the first 10 s", () => {
    // A real server turns away 3% steadily; the first seconds (connections opening) serve nothing.
    const steady = line(80, (t) => ({served: t < 10 ? 0 : inFault(t) ? 50 : 97}))
    const card = reportCard(steady, fault, 4)
    expect(card.before).toBeCloseTo(0.97, 10)
    expect(card.recovered).toBe(true)
    expect(card.secondsToFullServiceAfterFix).toBe(0)

    // The same run down to 90% after the fix is short of 97% − 2 points: not recovered.
    const worse = line(80, (t) => ({served: t < 10 ? 0 : inFault(t) ? 50 : t >= 40 ? 90 : 97}))
    const short = reportCard(worse, fault, 4)
    expect(short.before).toBeCloseTo(0.97, 10)
    expect(short.recovered).toBe(false)
    expect(short.secondsToFullServiceAfterFix).toBeNull()
  })

  it('measures against 1 when the fault leaves under 10 s of data before it', () => {
    const timeline = line(60, (t) => ({served: t >= 15 && t < 40 ? 50 : 97}))
    const card = reportCard(timeline, {from: 15, to: 40, servers: 1}, 4)
    expect(card.before).toBe(1)
    // 97% is short of 98%.
    expect(card.recovered).toBe(false)
  })
})

describe('fullServiceSince', () => {
  it('returns the second from which every 10 s window to the end holds the share', () => {
    const timeline = line(80, (t) => ({served: t >= 45 && t < 50 ? 50 : 100}))
    expect(fullServiceSince(timeline, 0.98)).toBe(50)
  })

  it('returns the first second when no window falls short', () => {
    expect(
      fullServiceSince(
        line(30, () => ({served: 100})),
        0.98,
      ),
    ).toBe(0)
  })

  it('returns null when the last window falls short, or there is less than a window', () => {
    expect(
      fullServiceSince(
        line(80, (t) => ({served: t >= 75 ? 0 : 100})),
        0.98,
      ),
    ).toBeNull()
    expect(
      fullServiceSince(
        line(5, () => ({served: 100})),
        0.98,
      ),
    ).toBeNull()
    expect(
      fullServiceSince(
        line(0, () => ({served: 100})),
        0.98,
      ),
    ).toBeNull()
  })

  it('counts a window in points of the timeline’s own step', () => {
    // Half-second points: the 10 s window is 20 points; short until 30 s.
    const n = 120
    const timeline: Timeline = {
      t: Float64Array.from({length: n}, (_, i) => i / 2),
      demand: new Float64Array(n).fill(100),
      served: Float64Array.from({length: n}, (_, i) => (i / 2 < 30 ? 50 : 100)),
      inRotation: new Float64Array(n).fill(4),
    }
    expect(fullServiceSince(timeline, 0.98)).toBe(30)
  })
})

describe('what a drill reads when parts are missing', () => {
  it('reports no fewest-in-rotation and no cascade when no count was read', () => {
    const card = reportCard(
      line(60, (t) => ({served: inFault(t) ? 40 : 100, inRotation: Number.NaN})),
      fault,
      4,
    )
    expect(card.fewestInRotation).toBeNull()
    expect(card.cascaded).toBe(false)
  })

  it('measures against 100% when less than a window was recorded before the fault', () => {
    // Two seconds of 90% before a fault at 20 s (from 10 s in): not enough to call it the run's normal.
    const timeline = line(12, (t) => ({served: t < 10 ? 100 : 90}))
    expect(reportCard(timeline, fault, 4).before).toBe(1)
  })

  it('reads full service over a wider window when given one', () => {
    // A 5 s dip after the fix: short of 98% in any 10 s window holding it, not in a 100 s one.
    const timeline = line(300, (t) => ({served: t >= 100 && t < 105 ? 50 : inFault(t) ? 0 : 100}))
    expect(reportCard(timeline, fault, 4, 10).secondsToFullServiceAfterFix).toBe(105 - 40)
    expect(reportCard(timeline, fault, 4, 100).secondsToFullServiceAfterFix).toBeGreaterThan(0)
    expect(drillWindowSeconds(1)).toBe(15)
    expect(drillWindowSeconds(1, 5)).toBe(10)
    expect(drillWindowSeconds(0.1)).toBe(150)
  })
})
