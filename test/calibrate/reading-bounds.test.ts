import {describe, expect, it} from 'vitest'
import {readingBounds} from '../../src/ports/reading-bounds.js'
import {scenarioLimits} from '../../src/sim/scenario/schema.js'

describe('the bounds on readings (src/ports/reading-bounds.ts)', () => {
  it("are the scenario's own where it has one, so a reading that passes is one a scenario can hold", () => {
    expect(readingBounds.maxServers).toBe(scenarioLimits.maxServers)
    expect(readingBounds.maxRps).toBe(scenarioLimits.maxRps)
    expect(readingBounds.maxSeconds).toBe(scenarioLimits.maxSpan)
  })
})
