/**
 * `npm run bench`: prints one JSON line per figure, {"name", "value", "unit"}. Figures that depend
 * on a noisy shared machine come with a baseline measured in the same run, so compare ratios.
 */
import {spawnSync} from 'node:child_process'
import {join} from 'node:path'
import {packageRoot} from '../src/package-root.js'
import {fleetConfig, loadScenario, pickSetups} from '../src/sim/scenario/load.js'
import {everythingOn} from './configs.js'
import {Fleet} from '../src/sim/fleet.js'
import type {EngineIO} from '../src/ports/io.js'
import {rehearse} from '../src/rehearsal/rehearse.js'
import {loadRunbookFile} from '../src/runbook/load.js'
import {readdirSync} from 'node:fs'

function emit(name: string, value: number, unit: string): void {
  process.stdout.write(`${JSON.stringify({name, value: Number(value.toPrecision(4)), unit})}\n`)
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
  for (let run = 0; run < 3; run++) {
    const fleet = new Fleet(config)
    const start = process.hrtime.bigint()
    fleet.run()
    seconds.push(Number(process.hrtime.bigint() - start) / 1e9)
  }
  emit('sim.core.10k-servers-3600-ticks.server-ticks-per-second', serverTicks / median(seconds), 'server-ticks/s')
  emit('sim.core.10k-servers-3600-ticks.wall', median(seconds) * 1000, 'ms')
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
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml')).sort()) {
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
  const time = (args: string[]): number => {
    const samples: number[] = []
    for (let i = 0; i < 11; i++) {
      const start = process.hrtime.bigint()
      const result = spawnSync(process.execPath, args, {stdio: 'ignore'})
      if (result.status !== 0) throw new Error(`${args.join(' ')} exited ${result.status}`)
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
}

simulationThroughput()
seedScenario()
await rehearsals()
startTimes()
