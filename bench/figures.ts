/**
 * `npm run bench`: prints one JSON line per figure, {"name", "value", "unit"}. Figures that depend
 * on a noisy shared machine come with a baseline measured in the same run, so compare ratios.
 */
import {spawnSync} from 'node:child_process'
import {join} from 'node:path'
import {packageRoot} from '../src/package-root.js'
import {fleetConfig, loadScenario, pickSetups} from '../src/sim/scenario/load-scenario.js'
import {everythingOn} from './configs.js'
import {minimalSeedRun, type SeedCase} from './minimal.js'
import {ScenarioRun} from '../src/sim/scenario-run.js'
import {Fleet} from '../src/sim/fleet.js'
import type {EngineIO} from '../src/ports/io.js'
import {rehearse} from '../src/wiring/rehearsal.js'
import {loadRunbookFile} from '../src/loader/load-runbook.js'
import {readdirSync} from 'node:fs'
import {terminalRendering} from './terminal.js'

function emit(name: string, value: number, unit: string): void {
  process.stdout.write(`${JSON.stringify({name, value: Number(value.toPrecision(4)), unit})}\n`)
}

function cpuSeconds(since: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(since)
  return (used.user + used.system) / 1e6
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

function simulationThroughput(): void {
  const config = everythingOn()
  const serverTicks = 10_000 * 3600
  const seconds: number[] = []
  const cpu: number[] = []
  for (let run = 0; run < 3; run++) {
    const fleet = new Fleet(config)
    const since = process.cpuUsage()
    const start = process.hrtime.bigint()
    fleet.run()
    seconds.push(Number(process.hrtime.bigint() - start) / 1e9)
    cpu.push(cpuSeconds(since))
  }
  emit('sim.core.10k-servers-3600-ticks.server-ticks-per-second', serverTicks / median(seconds), 'server-ticks/s')
  emit('sim.core.10k-servers-3600-ticks.wall', median(seconds) * 1000, 'ms')
  // The same runs on this process's CPU time: what the figure above is when no neighbour competes for the cores.
  emit('sim.core.10k-servers-3600-ticks.server-ticks-per-cpu-second', serverTicks / median(cpu), 'server-ticks/s')
}

/**
 * The seed scenario's feature set (outlook-2026) scaled to 10,000 servers × 3,600 s, every setup:
 * the simulator against the hand-written loop of bench/minimal.ts, which must give the same
 * figures bit for bit (or the bench stops) so the ratio compares the same work.
 */
function againstMinimalLoop(): void {
  const servers = 10_000
  const ticks = 3600
  const {scenario} = loadScenario('outlook-2026', {servers, demand: 750_000, broken: 3000, duration: ticks, faultAt: 360, fixAt: 1440})
  const setups = pickSetups(scenario, 'all')
  const fault = scenario.faults[0]
  if (fault.kind !== 'broken' || scenario.tick !== 1) throw new Error('outlook-2026 is no longer the seed case bench/minimal.ts implements')
  const cases: SeedCase[] = setups.map(({policy}) => ({
    servers,
    capacity: scenario.pools[0].capacity!,
    demand: scenario.demand.rps!,
    broken: fault.servers,
    from: fault.from,
    to: fault.to,
    ticks,
    seed: scenario.seed,
    ...scenario.healthCheck,
    policy,
  }))
  const check = (name: string, sim: Float64Array, minimal: Float64Array): void => {
    for (let t = 0; t < ticks; t++) {
      if (!Object.is(sim[t], minimal[t])) throw new Error(`bench/minimal.ts differs from the simulator: ${name} at t = ${t}: ${sim[t]} vs ${minimal[t]}`)
    }
  }
  // One untimed pass of each first: it compiles both, and it is the pass whose figures are compared.
  const records = setups.map(({policy}) => new Fleet(fleetConfig(scenario, policy)).run())
  cases.forEach((c, k) => {
    const minimal = minimalSeedRun(c)
    const name = setups[k].name
    check(`${name} served`, records[k].served, minimal.served)
    check(`${name} failed`, records[k].failed, minimal.failed)
    check(`${name} inRotation`, records[k].inRotation, minimal.inRotation)
  })
  // Then the two take turns, setup by setup, so a busy neighbour slows both alike; the ratio is
  // taken on this process's CPU time, which a shared machine disturbs far less than wall time.
  const simWall: number[] = []
  const minimalWall: number[] = []
  const ratios: number[] = []
  for (let run = 0; run < 5; run++) {
    let simCpu = 0,
      minimalCpu = 0,
      simNs = 0,
      minimalNs = 0
    for (let k = 0; k < setups.length; k++) {
      let cpu = process.cpuUsage()
      let start = process.hrtime.bigint()
      new Fleet(fleetConfig(scenario, setups[k].policy)).run()
      simNs += Number(process.hrtime.bigint() - start)
      simCpu += cpuSeconds(cpu)
      cpu = process.cpuUsage()
      start = process.hrtime.bigint()
      minimalSeedRun(cases[k])
      minimalNs += Number(process.hrtime.bigint() - start)
      minimalCpu += cpuSeconds(cpu)
    }
    simWall.push(simNs / 1e9)
    minimalWall.push(minimalNs / 1e9)
    ratios.push(simCpu / minimalCpu)
  }
  const serverTicks = servers * ticks * setups.length
  const name = 'seed-feature-set.10k-servers-3600-ticks.four-setups'
  emit(`sim.${name}.server-ticks-per-second`, serverTicks / median(simWall), 'server-ticks/s')
  emit(`minimal-loop.${name}.server-ticks-per-second`, serverTicks / median(minimalWall), 'server-ticks/s')
  emit(`sim.${name}.ratio-to-minimal-loop.cpu-time`, median(ratios), 'x')
}

/**
 * Sweep-sized work in one thread: outlook-2026 over a 40 × 40 grid (broken 0..20 × demand
 * 500..2000) with its four setups, 6,400 small runs, so what each run costs besides its ticks
 * (loading the scenario, building the fleet and its record, summing up) shows. Broken is rounded
 * to whole servers, so some rows repeat a count (`--sweep` itself allows at most 21 steps there);
 * the work is still 6,400 runs.
 */
function sweepSized(): void {
  const steps = 40
  let loading = 0
  let building = 0
  let running = 0
  let runs = 0
  const since = process.cpuUsage()
  const start = process.hrtime.bigint()
  for (let x = 0; x < steps; x++) {
    for (let y = 0; y < steps; y++) {
      let mark = process.hrtime.bigint()
      const broken = Math.round((20 * x) / (steps - 1))
      const demand = 500 + (1500 * y) / (steps - 1)
      // As the sweep does: 0 broken is a fault window in which nothing breaks, which --broken refuses.
      const loaded = loadScenario('outlook-2026', {demand}).scenario
      const scenario = {...loaded, faults: loaded.faults.map((f) => (f.kind === 'broken' ? {...f, servers: broken} : f))}
      const setups = pickSetups(scenario, 'all')
      let now = process.hrtime.bigint()
      loading += Number(now - mark)
      for (const {policy} of setups) {
        mark = now
        const run = new ScenarioRun(scenario, policy)
        now = process.hrtime.bigint()
        building += Number(now - mark)
        mark = now
        run.finish()
        now = process.hrtime.bigint()
        running += Number(now - mark)
        runs++
      }
    }
  }
  const wall = Number(process.hrtime.bigint() - start) / 1e6
  emit('sweep.outlook-2026.40x40-four-setups.single-thread.wall', wall, 'ms')
  emit('sweep.outlook-2026.40x40-four-setups.single-thread.cpu', cpuSeconds(since) * 1000, 'ms')
  emit('sweep.outlook-2026.40x40-four-setups.single-thread.load-scenario-per-cell', loading / 1e3 / (steps * steps), 'µs')
  emit('sweep.outlook-2026.40x40-four-setups.single-thread.build-fleet-per-run', building / 1e3 / runs, 'µs')
  emit('sweep.outlook-2026.40x40-four-setups.single-thread.run-and-summary-per-run', running / 1e3 / runs, 'µs')
}

function seedScenario(): void {
  const {scenario} = loadScenario('outlook-2026')
  const setups = pickSetups(scenario, 'all')
  const times: number[] = []
  for (let run = 0; run < 50; run++) {
    const start = process.hrtime.bigint()
    for (const {policy} of setups) new Fleet(fleetConfig(scenario, policy)).run()
    times.push(Number(process.hrtime.bigint() - start) / 1e6)
  }
  emit('sim.outlook-2026.four-setups.wall', median(times), 'ms')
}

/** Wall time of each shipped runbook's rehearsal, in process (the engine and the simulator, no terminal). */
async function rehearsals(): Promise<void> {
  const quiet: EngineIO = {notify: () => {}, confirm: async () => true}
  const dir = join(packageRoot, 'runbooks')
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()) {
    const runbook = loadRunbookFile(join(dir, file))
    const times: number[] = []
    let virtual = 0
    for (let run = 0; run < 5; run++) {
      const start = process.hrtime.bigint()
      const {rehearsal: r} = await rehearse(runbook, {operator: 'bench', io: quiet, signal: new AbortController().signal}, {pace: null})
      times.push(Number(process.hrtime.bigint() - start) / 1e6)
      virtual = r.endAt - r.startAt
    }
    emit(`rehearsal.${file.replace(/\.yaml$/, '')}.wall`, median(times), 'ms')
    emit(`rehearsal.${file.replace(/\.yaml$/, '')}.virtual-seconds-per-wall-second`, virtual / (median(times) / 1000), 'x')
  }
}

function startTimes(): void {
  const run = join(packageRoot, 'bin', 'run.js')
  const time = (args: string[], runs = 11, status = 0): number => {
    const samples: number[] = []
    for (let i = 0; i < runs; i++) {
      const start = process.hrtime.bigint()
      const result = spawnSync(process.execPath, args, {stdio: 'ignore'})
      if (result.status !== status) throw new Error(`${args.join(' ')} exited ${result.status}`)
      samples.push(Number(process.hrtime.bigint() - start) / 1e6)
    }
    return median(samples)
  }
  const bare = time(['-e', ''])
  const help = time([run, '--help'])
  const simulate = time([run, 'simulate', '--scenario', 'outlook-2026'])
  const rehearsal = time([run, 'run', join(packageRoot, 'runbooks', 'outlook-staged-return.yaml'), '--dry-run'])
  emit('start.node-baseline.median', bare, 'ms')
  emit('start.sluice-help.median', help, 'ms')
  emit('start.sluice-simulate-outlook-2026.median', simulate, 'ms')
  emit('start.sluice-run-outlook-staged-return-dry-run.median', rehearsal, 'ms')
  emit('start.sluice-help.ratio-to-node-baseline', help / bare, 'x')
  emit('start.sluice-simulate-outlook-2026.ratio-to-node-baseline', simulate / bare, 'x')
  // assess on a 100-server pool in the stuck region of outlook-2026 (30 of 100 out at 7,500 rps, exit 3):
  // the bar is 5 s with the map and 1 s with --quick, process start included.
  const pool = [run, 'assess', '--scenario', 'outlook-2026', '--servers', '100', '--demand', '7500', '--in-rotation', '70']
  const quick = time([...pool, '--quick'], 5, 3)
  const full = time(pool, 5, 3)
  emit('assess.100-servers-stuck.quick.median', quick, 'ms')
  emit('assess.100-servers-stuck.map.median', full, 'ms')
  emit('assess.100-servers-stuck.quick.ratio-to-simulate', quick / simulate, 'x')
  // The same cascade at 20,000 and 2,000,000 servers (6,000 and 600,000 out): asked of a scale model
  // (src/assess/scale.ts) within the budget; at 60eccf4, which ran every server, 7.8 s and 77 s at
  // 20,000, and past 150 s with --quick at 2,000,000 (docs/assess.md, "Work and its budget").
  const big = [run, 'assess', '--scenario', 'outlook-2026', '--servers', '20000', '--demand', '1500000', '--in-rotation', '14000']
  emit('assess.20k-servers-stuck.quick.median', time([...big, '--quick'], 3, 3), 'ms')
  emit('assess.20k-servers-stuck.map.median', time(big, 3, 3), 'ms')
  const huge = [run, 'assess', '--scenario', 'outlook-2026', '--servers', '2000000', '--demand', '150000000', '--in-rotation', '1400000', '--quick']
  emit('assess.2m-servers-stuck.quick.median', time(huge, 3, 3), 'ms')
}

simulationThroughput()
againstMinimalLoop()
sweepSized()
seedScenario()
await rehearsals()
startTimes()
terminalRendering()
