import {createHash} from 'node:crypto'
import {readdirSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {everythingOn} from '../../bench/configs.js'
import type {FleetConfig} from '../../src/sim/config.js'
import {Fleet} from '../../src/sim/fleet.js'
import {fleetConfig, loadScenario, pickSetups} from '../../src/sim/scenario/load-scenario.js'
import {summarize} from '../../src/sim/summary.js'
import {faultWindow} from '../../src/sim/fault-window.js'
import {rehearse} from '../../src/wiring/rehearsal.js'
import {loadRunbookFile} from '../../src/loader/load-runbook.js'
import type {SimulationRecord} from '../../src/sim/record.js'
import {RecordingIO} from '../helpers/fakes.js'

/**
 * Golden check: the simulator's output, bit for bit, for every shipped scenario and setup, the
 * bench's everything-on fleet at a tenth of its size, and every shipped runbook's rehearsal (which
 * drives the operator actions: restart, drain, register, weights). It pins the model's behaviour
 * so that a change meant only to make the simulator faster can be shown to change nothing.
 *
 * Each run gives two hashes: `inRotation` (the servers-in-rotation series and the summary's
 * minimum of it, whose definition is a reporting choice) and `rest` (every other series and the
 * rest of the summary).
 *
 * When the model is meant to change, regenerate: `SLUICE_GOLDEN_PRINT=1 npx vitest run --project
 * unit test/sim/golden.test.ts` prints the current table; paste it below and say in the commit why
 * the figures moved. Regenerate from the commit before a speed-up, never from the speed-up itself.
 */

function hashSeries(values: Float64Array, ticks: number, into: ReturnType<typeof createHash>): void {
  const v = values.subarray(0, ticks)
  into.update(new Uint8Array(v.buffer, v.byteOffset, v.byteLength))
}

/** The record and each of its pools hold their series as Float64Array fields: hashed alike, in key order, inRotation apart. */
function hashEverySeries(holder: object, ticks: number, rotation: ReturnType<typeof createHash>, rest: ReturnType<typeof createHash>): void {
  const fields = holder as Record<string, unknown>
  for (const key of Object.keys(fields).sort()) {
    const value = fields[key]
    if (!(value instanceof Float64Array)) continue
    hashSeries(value, ticks, key === 'inRotation' ? rotation : rest)
    rest.update(key)
  }
}

function digest(record: SimulationRecord, window: ReturnType<typeof faultWindow>): {inRotation: string; rest: string} {
  const rotation = createHash('sha256')
  const rest = createHash('sha256')
  hashEverySeries(record, record.ticks, rotation, rest)
  for (const pool of record.pools) {
    rest.update(pool.name)
    hashEverySeries(pool, record.ticks, rotation, rest)
  }
  const {minInRotation, ...summary} = summarize(record, window)
  rotation.update(String(minInRotation))
  rest.update(JSON.stringify(summary))
  return {inRotation: rotation.digest('hex').slice(0, 16), rest: rest.digest('hex').slice(0, 16)}
}

function runFleet(config: FleetConfig): {inRotation: string; rest: string} {
  return digest(new Fleet(config).run(), faultWindow(config.faults))
}

// The default model on every run. Regenerated as the queueing model came in (issue 20): only a
// maintenance pool's or a restriction's 503 asks clients to wait (moved the runs whose clients
// retry a fast failure); held threads are released exactly holdSeconds after they were taken (the
// runs with a thread-holding fault); servers carry their queue from tick to tick instead of
// collapsing goodput (every run that overloads a server). Runs that do none of these are the seed
// model's figures, unchanged. Then (issue 47) a server's queue holds a count of requests, queueSeconds
// of its warm capacity, as a real server's does: the runs whose servers queue while cold or while a
// dependency holds their threads (the thread holds, outlook-recovery-haproxy, the HAProxy rehearsals).
// And `observe layer7` counts a request never answered when its session ends, at timeout server
// (the two observe-layer7 runs). Then the bench's everything-on fleet took randomness (Poisson
// arrivals, service times spread as exponential ones, issue 47): its three runs moved, and again
// when a server's small counts a tick became Poisson draws (its thread-limited servers' counts are
// small). Then randomness became the default (issue 47): every scenario that does not say
// `randomness: none` draws its arrivals and service times (the seed model's, and the bench's
// seed feature set, are unchanged), and full service is judged over 10 s where a run draws; the
// shipped runbooks thread-hold-recovery (its cycle gate) and outlook-staged-return (no cycle gate)
// changed, and a cycle reads the pool before every batch. Then `observe layer7` took a late answer
// for the 200 HAProxy sees (measured): outlook-2026-haproxy's observe-layer7 run, whose unbounded
// queues park nothing, became its no-guard run bit for bit.
const golden: Record<string, {inRotation: string; rest: string}> = {
  'cafe-2024.yaml:no-guard': {inRotation: 'd3456fece7699b05', rest: '181d31e4ba33be2f'},
  'cafe-2024.yaml:cap-shed-slow-start': {inRotation: '851d3933776c2dde', rest: 'bd64a35b1d27fbf9'},
  'drill-cold-return.yaml:checks-only': {inRotation: '9405bf5f064ab80d', rest: '3503d05180b49614'},
  'drill-cold-storm.yaml:checks-only': {inRotation: '9405bf5f064ab80d', rest: '20f7aec29cfc1291'},
  'drill-judge-before.yaml:checks-only': {inRotation: '853b7510058ec12d', rest: 'f02cecf2b129c991'},
  'drill-judge-regression.yaml:checks-only': {inRotation: 'da1d4bdc64a020be', rest: '4f90b74d8404578c'},
  'drill-judge-shared-errors.yaml:checks-only': {inRotation: 'da1d4bdc64a020be', rest: '10d253f4f81723e1'},
  'drill-headroom.yaml:checks-only': {inRotation: '0b20456b8299c5e2', rest: 'cfb6901f06a3b93b'},
  'drill-layer7-hang.yaml:observe-layer7': {inRotation: '090786b29d45e29c', rest: '39809a2da5d02213'},
  'drill-layer7-hang.yaml:checks-only': {inRotation: '090786b29d45e29c', rest: '39809a2da5d02213'},
  'drill-retry-storm.yaml:no-budget': {inRotation: '0b20456b8299c5e2', rest: 'c40503ebaceeeb92'},
  'drill-retry-storm.yaml:budget-10': {inRotation: '0b20456b8299c5e2', rest: '609ef1a1cc528b48'},
  'drill-survivors-115.yaml:checks-only': {inRotation: '0b20456b8299c5e2', rest: '28486d85854a77d0'},
  'drill-survivors-90.yaml:checks-only': {inRotation: '0b20456b8299c5e2', rest: '19de313569ccd0cc'},
  'drill-thread-hold-at-timeout.yaml:checks-only': {inRotation: '8ffeed740bc7e8b5', rest: '18edd1e04d886d57'},
  'drill-thread-hold-lingering.yaml:checks-only': {inRotation: 'aa96102046998629', rest: '9f0e1f6d01441ce0'},
  'drill-thread-hold.yaml:checks-only': {inRotation: 'b007a06765e7b1c4', rest: 'cf3cc7a6fc8c92c4'},
  'near-capacity.yaml:no-guard': {inRotation: '82160c97670883d0', rest: 'f7d1f92a320928df'},
  'outlook-2026-haproxy.yaml:no-guard': {inRotation: '5d53268e4b4b68a5', rest: '08c9b3aa7d479a05'},
  'outlook-2026-haproxy.yaml:observe-layer7': {inRotation: '5d53268e4b4b68a5', rest: '08c9b3aa7d479a05'},
  'outlook-2026.yaml:no-guard': {inRotation: 'b06fd4aec96fe5b3', rest: 'afd1b0a765d15b88'},
  'outlook-2026.yaml:cap-third': {inRotation: '1e414c784bb35ed6', rest: '54ab47799cd47ad2'},
  'outlook-2026.yaml:panic-50': {inRotation: '9ca97749261d387f', rest: '14893748624e6dda'},
  'outlook-2026.yaml:cap-shed-slow-start': {inRotation: '1e414c784bb35ed6', rest: '6834c2c3e323d69a'},
  'outlook-recovery-haproxy.yaml:slowstart-60': {inRotation: '458df5403fea1fa2', rest: '2827bc3842f9ee86'},
  'outlook-recovery-haproxy.yaml:no-slowstart': {inRotation: '458df5403fea1fa2', rest: '0537fca6641dcea5'},
  'outlook-recovery.yaml:no-guard': {inRotation: '5ffee8ae5b50eaac', rest: '3303c03344284db0'},
  'outlook-recovery.yaml:cap-shed-slow-start': {inRotation: 'c85f11b5f2978165', rest: '768d6e579c2c7133'},
  'relapse.yaml:no-guard': {inRotation: '65680252f823ba66', rest: 'a52a119895e3bfba'},
  'relapse.yaml:cap-shed-slow-start': {inRotation: 'd6f20c401a13b60c', rest: 'cd2babca23f62ac1'},
  'retry-storm.yaml:no-budget': {inRotation: 'dc4b619642c6ac74', rest: '18b2f349411c6ac7'},
  'retry-storm.yaml:budget-10': {inRotation: 'dc4b619642c6ac74', rest: 'f0f2c71aef70195e'},
  'sql-2022.yaml:no-guard': {inRotation: 'b9581b3f76271851', rest: 'e6230d8aa6e55bbd'},
  'sql-2022.yaml:panic-50': {inRotation: 'b9581b3f76271851', rest: 'e6230d8aa6e55bbd'},
  'two-regions.yaml:cap-shed-slow-start': {inRotation: '142aea6bbeb09ba1', rest: '5df8b107b6fee80d'},
  'two-regions.yaml:no-guard': {inRotation: '142aea6bbeb09ba1', rest: '40d0f7bb8ecbf293'},
  'bench:everythingOn/10': {inRotation: '9ee6974ed11facca', rest: '06ac6f3e49a4c336'},
  'bench:everythingOn/10:collapse-refuse': {inRotation: 'fc4fadc73783d299', rest: '04eaf21d6038b9de'},
  'bench:everythingOn/10:drain-restart-return': {inRotation: '3ec13cac5e53b0c6', rest: '338926b435348017'},
  'rehearsal:drill-cold-return.yaml': {inRotation: 'b1dd6a8f01666e31', rest: '88b6bf5ca17ecd30'},
  'rehearsal:drill-cold-storm.yaml': {inRotation: 'b1dd6a8f01666e31', rest: '6a7056ef1d490cf3'},
  'rehearsal:drill-judge-before.yaml': {inRotation: '733ce31480a02a83', rest: 'c79726dda1239097'},
  'rehearsal:drill-judge-regression.yaml': {inRotation: 'c7f45afd2eb7366e', rest: '268190ce81d40ed4'},
  'rehearsal:drill-judge-shared-errors.yaml': {inRotation: '8da1b354da248656', rest: 'd9e420258da02456'},
  'rehearsal:drill-lift-at-once.yaml': {inRotation: '8ae09641dd6a1b4f', rest: 'ad11b2badca9dffc'},
  'rehearsal:drill-lift-by-degrees.yaml': {inRotation: 'f16fa8340553ea59', rest: '5277fd7b51aa1239'},
  'rehearsal:drill-thread-hold-recovery.yaml': {inRotation: '30bea17247f544b7', rest: 'c5230a63e3715f2a'},
  'rehearsal:naive-full-return.yaml': {inRotation: '73b6f32fbca72edb', rest: '7fcb2d0ff148d583'},
  'rehearsal:outlook-staged-return-haproxy.yaml': {inRotation: '9ae2ea33c1de42fd', rest: '6fbfec4bb71e9ecd'},
  'rehearsal:outlook-paced-return.yaml': {inRotation: 'a41dab6022a77f37', rest: 'ff266a4add908184'},
  'rehearsal:outlook-staged-return.yaml': {inRotation: '1481cf5babfb3d43', rest: 'f1c4620ff0aecbce'},
  'rehearsal:regional-dns-ramp.yaml': {inRotation: '142aea6bbeb09ba1', rest: 'd5c98e883fbb4b10'},
  'rehearsal:thread-hold-recovery.yaml': {inRotation: 'd6258a6c0e3020a8', rest: '19221de50e2413f3'},
}

// The seed model (model: seed) on every scenario and the bench's fleet: the figures of the model before
// the queueing rules (issue 20), unchanged. Captured at 15742a8 (before the speed-up). The inRotation hashes were taken again when servers in
// rotation came to count those that took the tick's traffic (before the tick's health check), with
// every `rest` hash unchanged.
const seedModel: Record<string, {inRotation: string; rest: string}> = {
  'cafe-2024.yaml:no-guard': {inRotation: '50c8c22ef9931bbe', rest: '53041ce0ad14873a'},
  'cafe-2024.yaml:cap-shed-slow-start': {inRotation: '7f396f0e70132fe9', rest: '267250d8a20366cf'},
  'drill-cold-return.yaml:checks-only': {inRotation: 'b9d15b102f29ec08', rest: '379b72f6115be1ac'},
  'drill-cold-storm.yaml:checks-only': {inRotation: 'b9d15b102f29ec08', rest: '379b72f6115be1ac'},
  'drill-judge-before.yaml:checks-only': {inRotation: '7e25c8f20002d2a1', rest: 'f05702ca661420cc'},
  'drill-judge-regression.yaml:checks-only': {inRotation: '6f5267014f879ece', rest: 'e29166d4e40e061c'},
  'drill-judge-shared-errors.yaml:checks-only': {inRotation: '6f5267014f879ece', rest: 'f4c5a70617644d5a'},
  'drill-headroom.yaml:checks-only': {inRotation: '6f95f0dfa95bb8c8', rest: '0d4ca0bb82e7811c'},
  'drill-layer7-hang.yaml:observe-layer7': {inRotation: 'a8d5cbf20574e9c7', rest: 'e041a14bd7a8d3c8'},
  'drill-layer7-hang.yaml:checks-only': {inRotation: '0921e17ff8bdf04a', rest: '7cbf9c11e5f760cf'},
  'drill-retry-storm.yaml:no-budget': {inRotation: '67d69356932d07b9', rest: '40b5fe777588634a'},
  // Added with outlook-2026-haproxy (issue 12): HAProxy's checks; no earlier entry changed.
  'drill-retry-storm.yaml:budget-10': {inRotation: '6f95f0dfa95bb8c8', rest: '030ea6c0c598c000'},
  'drill-survivors-115.yaml:checks-only': {inRotation: '6e3cae6d87c90a99', rest: '437e49343dc6d812'},
  'drill-survivors-90.yaml:checks-only': {inRotation: '6f95f0dfa95bb8c8', rest: 'd0cc209cc1d9c04c'},
  'drill-thread-hold-at-timeout.yaml:checks-only': {inRotation: '9e6b329a33a76289', rest: '4027135e43b50e21'},
  'drill-thread-hold-lingering.yaml:checks-only': {inRotation: 'e8c15969b9f44c29', rest: '56cd9dd5425a771d'},
  'drill-thread-hold.yaml:checks-only': {inRotation: '9e6b329a33a76289', rest: '4027135e43b50e21'},
  'near-capacity.yaml:no-guard': {inRotation: '82160c97670883d0', rest: '40e3de82865c266b'},
  'outlook-2026-haproxy.yaml:no-guard': {inRotation: '74c7696b41c1e2f1', rest: '9e62d4734e123bc0'},
  'outlook-2026-haproxy.yaml:observe-layer7': {inRotation: '54f26d3c501142fa', rest: 'ebe0f9220b2d368f'},
  'outlook-2026.yaml:no-guard': {inRotation: 'b06fd4aec96fe5b3', rest: 'afd1b0a765d15b88'},
  'outlook-2026.yaml:cap-third': {inRotation: '1e414c784bb35ed6', rest: '54ab47799cd47ad2'},
  'outlook-2026.yaml:panic-50': {inRotation: '9ca97749261d387f', rest: '14893748624e6dda'},
  // retry-storm's no-guard became no-budget (the same clients, now set by the setup: same hashes) beside budget-10.
  'outlook-2026.yaml:cap-shed-slow-start': {inRotation: '1e414c784bb35ed6', rest: '6834c2c3e323d69a'},
  'outlook-recovery-haproxy.yaml:slowstart-60': {inRotation: '45b5410dd8631c45', rest: 'a9f0cb4699e93a85'},
  'outlook-recovery-haproxy.yaml:no-slowstart': {inRotation: '45b5410dd8631c45', rest: '8fa0e41aacd386ef'},
  'outlook-recovery.yaml:no-guard': {inRotation: '7109acfd9fe75df7', rest: '10595282f70bb70b'},
  'outlook-recovery.yaml:cap-shed-slow-start': {inRotation: 'c85f11b5f2978165', rest: 'a539b7efb90eaff0'},
  'relapse.yaml:no-guard': {inRotation: '3681c413c48e7b20', rest: 'd8698ad39dc2a7da'},
  'relapse.yaml:cap-shed-slow-start': {inRotation: 'd6f20c401a13b60c', rest: '33561d59df46b2af'},
  'retry-storm.yaml:no-budget': {inRotation: 'dc4b619642c6ac74', rest: '7e05f46b901ccec6'},
  // Added with the drill scenarios of issue 20, in the seed model as it is.
  'retry-storm.yaml:budget-10': {inRotation: 'dc4b619642c6ac74', rest: '19c0a6bc3a0feae9'},
  'sql-2022.yaml:no-guard': {inRotation: 'b9581b3f76271851', rest: '378d481a70b9b90f'},
  'sql-2022.yaml:panic-50': {inRotation: 'b9581b3f76271851', rest: '378d481a70b9b90f'},
  'two-regions.yaml:cap-shed-slow-start': {inRotation: '142aea6bbeb09ba1', rest: '000de8c87686d471'},
  'two-regions.yaml:no-guard': {inRotation: '142aea6bbeb09ba1', rest: '000de8c87686d471'},
  // release is the queueing model's: the seed model's held threads decay at random and stall as before.
  'bench:everythingOn/10': {inRotation: 'b6f23bbee563e209', rest: '4f1be670d585f930'},
  // Added with near-capacity (issue 47): its randomness is the queueing model's; the seed model draws nothing.
  'bench:everythingOn/10:collapse-refuse': {inRotation: 'bbc30cc644c439c0', rest: '8c8acc54551a3a12'},
}

const scenarioRuns: Array<[string, () => FleetConfig]> = []
for (const file of readdirSync('scenarios')
  .filter((f) => f.endsWith('.yaml'))
  .sort()) {
  const {scenario} = loadScenario(join('scenarios', file))
  for (const {name, policy} of pickSetups(scenario, 'all')) scenarioRuns.push([`${file}:${name}`, () => fleetConfig(scenario, policy)])
}
scenarioRuns.push(['bench:everythingOn/10', () => everythingOn(0.1)])
// The other branches of the same fleet: collapse instead of shedding, no slow start, no panic, refusing servers.
scenarioRuns.push([
  'bench:everythingOn/10:collapse-refuse',
  () => {
    const config = everythingOn(0.1)
    return {
      ...config,
      policy: {...config.policy, shed: false, slowStart: 0, panicThreshold: 0},
      faults: config.faults.map((f) => (f.kind === 'broken' ? {...f, mode: 'refuse' as const} : f)),
    }
  },
])

const print = process.env.SLUICE_GOLDEN_PRINT === '1'
const seen: Record<string, {inRotation: string; rest: string}> = {}
const seenSeed: Record<string, {inRotation: string; rest: string}> = {}
const table = (runs: typeof seen) =>
  Object.entries(runs)
    .map(
      ([k, v]) =>
        `  '${k}': ${JSON.stringify(v)
          .replace(/"(\w+)":/g, '$1: ')
          .replace(/"/g, "'")
          .replace(/,/g, ', ')},`,
    )
    .join('\n')

describe('golden: the simulator gives the same figures, bit for bit', () => {
  for (const [name, config] of scenarioRuns) {
    it(name, () => {
      seen[name] = runFleet(config())
      if (!print) expect(seen[name]).toEqual(golden[name])
    })
  }

  // What a runbook does to a pool, on the bench's fleet: drain, restart (cold), remediate, return
  // in slow start, a slow start changed mid-run, and a restart of the stalled servers.
  const operated = 'bench:everythingOn/10:drain-restart-return'
  it(operated, () => {
    const fleet = new Fleet(everythingOn(0.1))
    const [east, west] = fleet.pools
    const first = Int32Array.from({length: 100}, (_, i) => i)
    fleet.runUntil(1000)
    east.deregister(first)
    east.restart(first, fleet.tick, 30)
    east.remediate(first)
    fleet.runUntil(1100)
    east.register(first, fleet.tick)
    west.policy.slowStart = 20
    fleet.runUntil(2100)
    const stalled = Int32Array.from({length: west.size}, (_, i) => i).filter((i) => west.stalled[i] === 1)
    west.deregister(stalled)
    west.restart(stalled, fleet.tick, 30)
    fleet.runUntil(2200)
    west.register(stalled, fleet.tick)
    seen[operated] = digest(fleet.run(), faultWindow(fleet.config.faults))
    if (!print) expect(seen[operated]).toEqual(golden[operated])
  })

  for (const file of readdirSync('runbooks')
    .filter((f) => f.endsWith('.yaml'))
    .sort()) {
    const name = `rehearsal:${file}`
    it(name, async () => {
      const {rehearsal} = await rehearse(
        loadRunbookFile(join('runbooks', file)),
        {operator: 'golden', io: new RecordingIO('no-tty'), signal: new AbortController().signal},
        {pace: null},
      )
      seen[name] = digest(rehearsal.record, rehearsal.window)
      if (!print) expect(seen[name]).toEqual(golden[name])
    })
  }

  for (const [name, config] of scenarioRuns) {
    it(`${name} in the seed model`, () => {
      // At the tick the seed's table was computed at, whatever the queueing model's default for the
      // scenario, and with its arrivals at the mean: the seed model draws nothing (randomness: none).
      const queueing = config()
      seenSeed[name] = runFleet({...queueing, model: 'seed', tick: 1, demand: {...queueing.demand, arrivals: 'mean'}})
      if (!print) expect(seenSeed[name]).toEqual(seedModel[name])
    })
  }

  it('covers every run above', () => {
    if (print) {
      process.stdout.write(`${table(seen)}\n// seed model\n${table(seenSeed)}\n`)
      return
    }
    expect(Object.keys(seen).sort()).toEqual(Object.keys(golden).sort())
    expect(Object.keys(seenSeed).sort()).toEqual(Object.keys(seedModel).sort())
  })
})
