import {createHash} from 'node:crypto'
import {readdirSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {everythingOn} from '../../bench/configs.js'
import type {FleetConfig} from '../../src/sim/config.js'
import {Fleet} from '../../src/sim/fleet.js'
import {fleetConfig, loadScenario, pickSetups} from '../../src/sim/scenario/load.js'
import {faultWindow, summarize} from '../../src/sim/summary.js'
import {rehearse} from '../../src/rehearsal/rehearse.js'
import {loadRunbookFile} from '../../src/runbook/load.js'
import type {SimulationRecord} from '../../src/sim/record.js'
import {RecordingIO} from '../helpers/fakes.js'

/**
 * Golden check: the simulator's output, bit for bit, for every shipped scenario and setup, the
 * bench's everything-on fleet at a tenth of its size, and every shipped runbook's rehearsal (which
 * drives the operator actions: restart, drain, register, weights). It pins the model's behaviour
 * so that a change meant only to make the simulator faster can be shown to change nothing.
 *
 * Each run gives two hashes: `inRotation` (the servers-in-rotation series, whose definition is a
 * reporting choice) and `rest` (every other series and the summary).
 *
 * When the model is meant to change, regenerate: `SLUICE_GOLDEN_PRINT=1 npx vitest run --project
 * unit test/sim/golden.test.ts` prints the current table; paste it below and say in the commit why
 * the figures moved. Regenerate from the commit before a speed-up, never from the speed-up itself.
 */

function hashSeries(values: Float64Array, ticks: number, into: ReturnType<typeof createHash>): void {
  const v = values.subarray(0, ticks)
  into.update(new Uint8Array(v.buffer, v.byteOffset, v.byteLength))
}

function digest(record: SimulationRecord, window: ReturnType<typeof faultWindow>): {inRotation: string; rest: string} {
  const rotation = createHash('sha256')
  const rest = createHash('sha256')
  const top = record as unknown as Record<string, unknown>
  for (const key of Object.keys(top).sort()) {
    const value = top[key]
    if (!(value instanceof Float64Array)) continue
    hashSeries(value, record.ticks, key === 'inRotation' ? rotation : rest)
    rest.update(key)
  }
  for (const pool of record.pools) {
    rest.update(pool.name)
    const series = pool as unknown as Record<string, unknown>
    for (const key of Object.keys(series).sort()) {
      const value = series[key]
      if (!(value instanceof Float64Array)) continue
      hashSeries(value, record.ticks, key === 'inRotation' ? rotation : rest)
      rest.update(key)
    }
  }
  rest.update(JSON.stringify(summarize(record, window)))
  return {inRotation: rotation.digest('hex').slice(0, 16), rest: rest.digest('hex').slice(0, 16)}
}

function runFleet(config: FleetConfig): {inRotation: string; rest: string} {
  return digest(new Fleet(config).run(), faultWindow(config.faults))
}

const golden: Record<string, {inRotation: string; rest: string}> = {
  'cafe-2024.yaml:no-guard': {inRotation: '1cb12d7ff4036863', rest: '615010355441bcea'},
  'cafe-2024.yaml:cap-shed-slow-start': {inRotation: 'af75b43c776c8615', rest: '661bcdad55f9bec2'},
  'outlook-2026.yaml:no-guard': {inRotation: 'c6b4455464807858', rest: '096aea66c105067b'},
  'outlook-2026.yaml:cap-third': {inRotation: 'e82190361f555f07', rest: '8581df82c0f0a885'},
  'outlook-2026.yaml:panic-50': {inRotation: '59ed32b8d0a077c6', rest: 'b271cde0d9d1f978'},
  'outlook-2026.yaml:cap-shed-slow-start': {inRotation: 'e82190361f555f07', rest: 'e89ce309e2778556'},
  'outlook-recovery.yaml:no-guard': {inRotation: 'c8a080d296dbd423', rest: '525bfc25db159a17'},
  'outlook-recovery.yaml:cap-shed-slow-start': {inRotation: '3ad7f7ff478fd79d', rest: 'c2c6f75c75f099b2'},
  'relapse.yaml:no-guard': {inRotation: '93b0ec9f01cc1e9f', rest: 'a69f1e9dcd72bf49'},
  'relapse.yaml:cap-shed-slow-start': {inRotation: 'd2d211bb9256e0ce', rest: '1da6a6be55c0ef2b'},
  'retry-storm.yaml:no-guard': {inRotation: 'b28fd3713d30b479', rest: '663039278f95db3d'},
  'sql-2022.yaml:no-guard': {inRotation: 'e2a33a076bbafa53', rest: '3d94f30cfa7a6c6e'},
  'sql-2022.yaml:panic-50': {inRotation: 'e2a33a076bbafa53', rest: '3d94f30cfa7a6c6e'},
  'two-regions.yaml:cap-shed-slow-start': {inRotation: '3b0fdef33254c7c5', rest: '7bb59e3a9b3f29e6'},
  'two-regions.yaml:no-guard': {inRotation: '3b0fdef33254c7c5', rest: '7bb59e3a9b3f29e6'},
  'bench:everythingOn/10': {inRotation: 'a6a5989b6ab5244b', rest: '805cc81e68f5e342'},
  'bench:everythingOn/10:collapse-refuse': {inRotation: '79099ecceb526433', rest: 'bde714e7a7b9d84d'},
  'rehearsal:naive-full-return.yaml': {inRotation: 'c8a080d296dbd423', rest: '1c05d3773833cc44'},
  'rehearsal:outlook-staged-return.yaml': {inRotation: 'db4b3f7251228135', rest: 'fce7093d4ca4a77f'},
  'rehearsal:regional-dns-ramp.yaml': {inRotation: '3b0fdef33254c7c5', rest: '0c7a4b47c5a85a90'},
  'rehearsal:thread-hold-recovery.yaml': {inRotation: '178de6ff91a5010b', rest: 'd11790f761ccb96a'},
}

const scenarioRuns: Array<[string, () => FleetConfig]> = []
for (const file of readdirSync('scenarios').filter((f) => f.endsWith('.yaml')).sort()) {
  const {scenario} = loadScenario(join('scenarios', file))
  for (const {name, policy} of pickSetups(scenario, 'all')) scenarioRuns.push([`${file}:${name}`, () => fleetConfig(scenario, policy)])
}
scenarioRuns.push(['bench:everythingOn/10', () => everythingOn(0.1)])
// The other branches of the same fleet: collapse instead of shedding, no slow start, no panic, refusing servers.
scenarioRuns.push(['bench:everythingOn/10:collapse-refuse', () => {
  const config = everythingOn(0.1)
  return {
    ...config,
    policy: {...config.policy, shed: false, slowStart: 0, panicThreshold: 0},
    faults: config.faults.map((f) => (f.kind === 'broken' ? {...f, mode: 'refuse' as const} : f)),
  }
}])

const print = process.env.SLUICE_GOLDEN_PRINT === '1'
const seen: Record<string, {inRotation: string; rest: string}> = {}

describe('golden: the simulator gives the same figures, bit for bit', () => {
  for (const [name, config] of scenarioRuns) {
    it(name, () => {
      seen[name] = runFleet(config())
      if (!print) expect(seen[name]).toEqual(golden[name])
    })
  }

  for (const file of readdirSync('runbooks').filter((f) => f.endsWith('.yaml')).sort()) {
    const name = `rehearsal:${file}`
    it(name, async () => {
      const {rehearsal} = await rehearse(loadRunbookFile(join('runbooks', file)), {operator: 'golden', io: new RecordingIO('no-tty'), signal: new AbortController().signal}, {pace: null})
      seen[name] = digest(rehearsal.record, rehearsal.window)
      if (!print) expect(seen[name]).toEqual(golden[name])
    })
  }

  it('covers every run above', () => {
    if (print) {
      process.stdout.write(`${Object.entries(seen).map(([k, v]) => `  '${k}': ${JSON.stringify(v).replace(/"(\w+)":/g, '$1: ').replace(/"/g, "'").replace(/,/g, ', ')},`).join('\n')}\n`)
      return
    }
    expect(Object.keys(seen).sort()).toEqual(Object.keys(golden).sort())
  })
})
