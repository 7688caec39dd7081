import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {Fleet} from '../../src/sim/fleet.js'
import {fleetConfig, loadScenario, pickSetups} from '../../src/sim/scenario/load-scenario.js'
import type {Scenario} from '../../src/sim/scenario/schema.js'
import type {FleetConfig} from '../../src/sim/config.js'

/** The index of a record's point at `seconds` of simulated time (the first at or after it), whatever the tick. */
export function pointAt(record: {t: ArrayLike<number>; ticks: number}, seconds: number): number {
  for (let i = 0; i < record.ticks; i++) if (record.t[i] >= seconds - 1e-9) return i
  throw new Error(`the record ends before ${seconds} s`)
}

export function builtin(name: string): Scenario {
  return loadScenario(name).scenario
}

/**
 * A shipped scenario with nothing drawn (randomness: none): for a test that pins a mechanism's
 * figures, which are the mean model's, whatever randomness the scenario runs with by default.
 */
export function atTheMean(name: string): Scenario {
  return {...builtin(name), randomness: 'none'}
}

/** A scenario from YAML text, read through the loader as a file would be. */
export function scenarioFrom(yaml: string): Scenario {
  const file = join(mkdtempSync(join(tmpdir(), 'sluice-scenario-')), 'scenario.yaml')
  writeFileSync(file, yaml)
  return loadScenario(file).scenario
}

/** A fleet for one of a scenario's setups, with an optional tweak to its config. */
export function fleetFor(scenario: Scenario, setup: string, tweak: (c: FleetConfig) => void = () => {}): Fleet {
  const [{policy}] = pickSetups(scenario, [setup])
  const config = fleetConfig(scenario, policy)
  tweak(config)
  return new Fleet(config)
}

export function mean(values: ArrayLike<number>, from: number, to: number): number {
  let sum = 0
  for (let i = from; i < to; i++) sum += values[i]
  return sum / (to - from)
}

/** Sample mean and variance of n draws. */
export function moments(draw: () => number, n: number): {mean: number; variance: number} {
  let sum = 0
  let squares = 0
  for (let i = 0; i < n; i++) {
    const x = draw()
    sum += x
    squares += x * x
  }
  const mean = sum / n
  return {mean, variance: squares / n - mean * mean}
}
