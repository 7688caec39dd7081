/**
 * The sweep's figures for `npm run bench` (imported at the end of bench/figures.ts; `node
 * dist/bench/sweep.js` runs it alone): wall time of a map with every worker the machine has and with
 * one thread, and their ratio, on outlook-2026 and on a 100-server × 900 s pool. One JSON line a
 * figure, {"name", "value", "unit"}, like bench/figures.ts.
 */
import {availableParallelism} from 'node:os'
import {loadScenario, pickSetups} from '../src/sim/scenario/load-scenario.js'
import {scenarioSchema, type Scenario} from '../src/sim/scenario/schema.js'
import {buildAxes} from '../src/sweep/grid.js'
import {runSweep} from '../src/sweep/sweep.js'
import {cellRunner, type CellRunner} from '../src/sweep/workers.js'

function emit(name: string, value: number, unit: string): void {
  process.stdout.write(`${JSON.stringify({name, value: Number(value.toPrecision(4)), unit})}\n`)
}

/** outlook-2026 five times over: 100 servers × 100 rps for 900 s, the same four setups. */
function bigPool(): Scenario {
  const {scenario} = loadScenario('outlook-2026')
  return scenarioSchema.parse({
    name: 'bench-100-servers-900-s',
    duration: 900,
    seed: 1,
    pools: [{name: 'mailbox', servers: 100, capacity: 100}],
    demand: {rps: 7500},
    healthCheck: scenario.healthCheck,
    faults: [{kind: 'broken', servers: 30, from: 60, to: 400}],
    setups: scenario.setups,
  })
}

/** Counts the runs a sweep makes, grid and bisection together. */
function counted(runner: CellRunner): {runner: CellRunner; runs: () => number} {
  let runs = 0
  return {
    runner: {
      run: (cells, progress) => {
        runs += cells.length
        return runner.run(cells, progress)
      },
      retarget: (job) => runner.retarget(job),
      close: () => runner.close(),
    },
    runs: () => runs,
  }
}

async function sweep(name: string, scenario: Scenario, specs: string[]): Promise<void> {
  const setups = pickSetups(scenario, 'all')
  const axes = buildAxes(specs, scenario, setups.length)
  const job = {scenario, setups, params: axes.map((a) => a.param.name)}
  const gridRuns = setups.length * axes.reduce((n, a) => n * a.values.length, 1)
  const serverTicks = (scenario.pools[0].servers ?? 0) * (scenario.duration / scenario.tick)
  const walls: Record<number, number> = {}
  // This thread warm before either measurement, so neither pays for its JIT; worker threads start cold, as they do for a user.
  const warm = cellRunner(job, 1)
  await warm.run(axes[0].values.slice(0, 8).map((x) => ({setup: 0, x, y: axes[1]?.values[0] ?? NaN})))
  for (const workers of [1, availableParallelism()]) {
    const {runner, runs} = counted(cellRunner(job, workers))
    // Worker start-up is part of what a user waits for, so it is inside the measurement.
    const cpu = process.cpuUsage()
    const start = process.hrtime.bigint()
    let gridDone = 0
    await runSweep(scenario, setups, axes, runner, (phase, done, total) => {
      if (phase === 'grid' && done === total && gridDone === 0) gridDone = Number(process.hrtime.bigint() - start) / 1e9
    })
    const wall = Number(process.hrtime.bigint() - start) / 1e9
    const used = process.cpuUsage(cpu)
    await runner.close()
    walls[workers] = wall
    const label = workers === 1 ? 'one-thread' : `${workers}-workers`
    emit(`sweep.${name}.${label}.grid-wall`, gridDone * 1000, 'ms')
    emit(`sweep.${name}.${label}.wall`, wall * 1000, 'ms')
    // CPU time of every thread of the process: on a machine other work shares, wall time says little on its own.
    emit(`sweep.${name}.${label}.cpu`, (used.user + used.system) / 1000, 'ms')
    emit(`sweep.${name}.${label}.runs`, runs(), 'runs')
    emit(`sweep.${name}.${label}.server-ticks-per-second`, (runs() * serverTicks) / wall, 'server-ticks/s')
  }
  emit(`sweep.${name}.grid-runs`, gridRuns, 'runs')
  emit(`sweep.${name}.speed-up-over-one-thread`, walls[1] / walls[availableParallelism()], 'x')
}

await sweep('outlook-2026.40x40', loadScenario('outlook-2026').scenario, ['demand=500..2000:40', 'fault-duration=20..410:40'])
await sweep('100-servers-900-s.50x50', bigPool(), ['broken=0..98:50', 'demand=2500..10000:50'])
