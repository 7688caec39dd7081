import {describe, expect, it} from 'vitest'
import {livePlanVerdict, planLines} from '../../src/format.js'
import type {PlannedStep} from '../../src/ports/io.js'

// Issue 48: a live plan says "every step finds what it expects" only when it read what every step
// changes; a step it read nothing for (a weighted split between target groups) is said not read.
const step = (index: number, more: Partial<PlannedStep> = {}): PlannedStep => ({index, action: 'wait', title: `step ${index + 1}`, details: [], ...more})
const unread = {
  action: 'weighted-target-groups',
  unread: ['not read: a live plan does not read what this weighted-target-groups step changes; the step reads it when it starts'],
}

describe("a live plan's last line", () => {
  it('every step read, none drifted: every step finds what it expects', () => {
    expect(livePlanVerdict([step(0), step(1)])).toBe('Every step finds what it expects.')
  })

  it('a step not read: says which, never that every step finds what it expects', () => {
    expect(livePlanVerdict([step(0), step(1, unread)])).toBe('Every step read finds what it expects; step 2 was not read (marked ?).')
    expect(livePlanVerdict([step(0, unread), step(1, unread), step(2)])).toBe('Every step read finds what it expects; 2 steps were not read (marked ?).')
    expect(livePlanVerdict([step(0, unread)])).toBe('No step was read: step 1 was not read (marked ?).')
  })

  it('drift and a step not read: both said', () => {
    expect(livePlanVerdict([step(0, {drift: ['a freeze by bob']}), step(1, unread)])).toBe(
      '1 of 2 steps find the world other than they expect (marked !); step 2 was not read (marked ?).',
    )
  })

  it("the run's own plan marks the step not read too", () => {
    expect(planLines([step(0, unread)])).toContain(
      '     ? not read: a live plan does not read what this weighted-target-groups step changes; the step reads it when it starts',
    )
  })
})
