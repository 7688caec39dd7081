import type {Policy} from './config.js'
import {fullServiceShare, fullServiceWindowSeconds, type SimulationRecord} from './record.js'
import {ScenarioRun} from './scenario-run.js'
import {randomnessOf, type Scenario} from './scenario/schema.js'

/**
 * One scenario run on several seeds: with randomness drawn, one seed is one sample of the
 * arrivals and service times, and a pool near its capacity holds on some and tips on others. A
 * verdict over seeds says on how many it held and, for the rest, when each tipped.
 */
export interface SeedOutcome {
  seed: number
  /** Not at full service over the run's last window, although every fault was fixed before it. */
  tipped: boolean
  /** When the stretch it ended in began: the end of the last window at full service (0: never at full service). Null when it held. */
  tippedAt: number | null
  lostPercent: number
}

export interface SetupOverSeeds {
  name: string
  outcomes: SeedOutcome[]
}

export interface OverSeeds {
  randomness: 'drawn' | 'none'
  seeds: number[]
  setups: SetupOverSeeds[]
}

/**
 * Seeds a verdict is drawn from when nobody says: with randomness drawn one seed is one sample,
 * and a pool near its edge holds on some and tips on others, so ten; with none every seed gives
 * the same arrivals, so one.
 */
export const defaultSeeds = (scenario: Pick<Scenario, 'randomness' | 'model'>): number => (randomnessOf(scenario) === 'drawn' ? 10 : 1)

/** Runs every setup on `count` seeds from the scenario's own; seeds differ only where the scenario draws. */
export function overSeeds(scenario: Scenario, setups: Array<{name: string; policy: Policy}>, count: number): OverSeeds {
  const seeds = Array.from({length: count}, (_, i) => scenario.seed + i)
  return {
    randomness: randomnessOf(scenario),
    seeds,
    setups: setups.map(({name, policy}) => ({
      name,
      outcomes: seeds.map((seed) => {
        const {record, summary} = new ScenarioRun({...scenario, seed}, policy).finish()
        return {seed, ...tipOf(record), lostPercent: summary.lostPercent}
      }),
    })),
  }
}

/** Whether a run ended below full service, judged over windows of fullServiceWindowSeconds, and since when. */
export function tipOf(record: SimulationRecord): {tipped: boolean; tippedAt: number | null} {
  const points = record.ticks
  const per = Math.max(1, Math.round(fullServiceWindowSeconds / record.resolution))
  const full = (from: number, to: number): boolean => {
    let served = 0
    let asked = 0
    for (let i = from; i < to; i++) {
      served += record.served[i]
      asked += Math.max(0, record.demand[i] - record.restrictedDemand[i])
    }
    return served + 1e-9 >= fullServiceShare * asked
  }
  if (points === 0 || full(Math.max(0, points - per), points)) return {tipped: false, tippedAt: null}
  // Back from the end, window by window, to the last one at full service.
  for (let end = points - per; end > 0; end -= per) {
    if (full(Math.max(0, end - per), end)) return {tipped: true, tippedAt: record.t[end - 1] + record.resolution}
  }
  return {tipped: true, tippedAt: 0}
}

/** "held on 2 of 10 seeds; tipped on 8: seed 1 at +12:30, …" for one setup. */
export function overSeedsSentence(setup: SetupOverSeeds, stamp: (at: number) => string): string {
  const tipped = setup.outcomes.filter((o) => o.tipped)
  const count = setup.outcomes.length
  const held = `held on ${count - tipped.length} of ${count} seed${count === 1 ? '' : 's'}`
  if (tipped.length === 0) return held
  const listed = tipped.slice(0, 5).map((o) => `seed ${o.seed} at ${stamp(o.tippedAt!)}`)
  const more = tipped.length > 5 ? `, and ${tipped.length - 5} more` : ''
  return `${held}; tipped on ${tipped.length}: ${listed.join(', ')}${more}`
}
