import {Flags} from '@oclif/core'
import {SluiceCommand} from '../src/cli/base.js'
import {decimal, randomnessFlag, scenarioFlag, seconds} from '../src/cli/flags.js'
import {related} from '../src/cli/flag-relations.js'
import {InputError} from '../src/errors.js'
import {chooseMode} from '../src/cli/terminal/mode.js'
import {outputWidth} from '../src/cli/output-width.js'
import {renderSweep, sweepHtml, sweepSvg} from '../src/report/heatmap.js'
import {renderSimulation, simulationHtml, simulationSvg} from '../src/report/simulation.js'
import {loadScenario, parsePolicy, pickSetups, withRandomness} from '../src/sim/scenario/load-scenario.js'
import type {Policy} from '../src/sim/config.js'
import {scenarioLimits, type Scenario} from '../src/sim/scenario/schema.js'
import {simulateSetups, simulationJson, type SimulationJson} from '../src/sim/simulate.js'
import {defaultSeeds} from '../src/sim/seeds.js'
import {buildAxes} from '../src/sweep/grid.js'
import {sweepParams} from '../src/sweep/params.js'
import {sweepProgress} from '../src/cli/sweep-progress.js'
import {StatusLine} from '../src/cli/terminal/status-line.js'
import {checkOutputName, writeOutput} from '../src/cli/output-file.js'
import {runSweep, sweepJson, type SweepJson} from '../src/sweep/sweep.js'
import {cellRunner, defaultWorkers} from '../src/sweep/workers.js'

/** The flags that set what a sweep parameter varies. */
const sweptByFlag = {broken: 'broken', demand: 'demand', servers: 'servers', capacity: 'capacity', 'fix-at': 'fault-duration'} as const

export default class Simulate extends SluiceCommand {
  static override summary = 'Simulate a pool under a fault and compare load-balancer setups.'

  static override description = `Runs a scenario (a fleet, its demand, its faults and one or more load-balancer setups) in virtual time and reports, per setup, the completed requests per second during the fault, the requests lost, how long after the fix the pool was back at full service, and the fewest servers left in rotation, followed by a chart.

Full service means completed requests within 1% of demand from that second to the end of the run.

With --sweep PARAM=FROM..TO[:STEPS] (once for a strip, twice for a map; the first is the x axis) it runs every setup the scenario declares (or the --setup ones) at every point of the grid, and draws one map per setup. Each cell is one run:
  unharmed   full service at every second of the run;
  recovered  below full service at some second, then at full service from some second to the end of the run; recoveredSecondsAfterFix counts from the (last) fix, 0 when service was back before it;
  stuck      not at full service at the end of the run, although the fault was fixed before the end.
Each cell also carries meanServedDuringFault (mean completed rps from the fault to the fix). Where a row changes between stuck and not stuck along the x axis, the change is narrowed by bisection (to a whole number, or 1/32 of the grid's step), and each setup's tipping point is said in words at the scenario's own value of the y axis.

PARAM is one of: ${sweepParams.map((p) => p.name + (p.unit ? ` (${p.unit})` : '')).join(', ')}. broken and fault-duration change the first broken fault; servers and capacity the first pool; restricted the share of the scenario's first restriction (restrictions: [{type, share}]); a setup key overrides it in every setup. STEPS defaults to every whole number up to 41 points for counts, else 21 points.`

  static override examples = [
    '<%= config.bin %> <%= command.id %> --scenario outlook-2026 --compare',
    '<%= config.bin %> <%= command.id %> --scenario outlook-2026 --setup panic-50 --svg panic.svg',
    '<%= config.bin %> <%= command.id %> --scenario outlook-2026 --policy maxEjectionPercent=33,shed=true,slowStart=60',
    '<%= config.bin %> <%= command.id %> --scenario ./my-fleet.yaml --broken 8 --demand 1000 --json',
    '<%= config.bin %> <%= command.id %> --scenario outlook-2026 --sweep broken=0..20 --sweep demand=500..2000 --svg map.svg',
    '<%= config.bin %> <%= command.id %> --sweep maxEjectionPercent=0..100:11 --sweep demand=1000..2000:11 --setup cap-shed-slow-start --json',
  ]

  static override flags = {
    broken: Flags.integer({description: 'Servers the first broken fault breaks.', min: 0, max: scenarioLimits.maxServers}),
    capacity: decimal({description: 'Requests per second one server of the first pool completes.'}),
    compare: related(Flags.boolean({description: 'Run every setup the scenario declares, side by side.', default: false}), {
      exclusive: {flags: ['setup'], why: 'it runs every setup the scenario declares; leave out --setup, or drop --compare'},
    }),
    demand: decimal({description: "Constant demand in requests per second (replaces the scenario's curve)."}),
    duration: seconds({description: 'How long to simulate.', min: scenarioLimits.minTick, max: scenarioLimits.maxSeconds}),
    'fault-at': seconds({description: 'When the first broken fault starts.', max: scenarioLimits.maxSeconds}),
    'fix-at': seconds({description: 'When the first broken fault is fixed.', max: scenarioLimits.maxSeconds}),
    html: Flags.string({
      description: 'Also save a self-contained HTML page: the figures and charts (with --sweep, the maps, tipping points and counts).',
      helpValue: 'FILE',
    }),
    policy: Flags.string({
      description: 'A custom setup as key=value pairs: maxEjectionPercent, panicThreshold, shed, slowStart, slowStartMinWeightPercent.',
      helpValue: 'KEY=VALUE,...',
    }),
    scenario: scenarioFlag,
    randomness: randomnessFlag,
    seed: Flags.integer({description: 'Seed for every random draw.'}),
    seeds: related(
      Flags.integer({
        description:
          'Run every setup on this many seeds, from the scenario’s (or --seed’s), and say on how many it held and when the others tipped. Default: 10 where randomness is drawn, 1 where none.',
        min: 1,
        max: 100,
        helpValue: 'N',
      }),
      {exclusive: {flags: ['sweep'], why: 'a sweep runs each cell on one seed'}},
    ),
    servers: Flags.integer({description: 'Servers in the first pool.', min: 1, max: scenarioLimits.maxServers}),
    setup: Flags.string({description: 'A setup the scenario declares (repeatable). Default: the first one.', multiple: true, helpValue: 'NAME'}),
    svg: Flags.string({description: 'Also save the chart (with --sweep, the maps side by side) as an SVG file.', helpValue: 'FILE'}),
    sweep: Flags.string({
      description: 'Sweep a parameter over a range: once for a strip, twice for a map (the first is the x axis). See the description for PARAM.',
      multiple: true,
      helpValue: 'PARAM=FROM..TO[:STEPS]',
    }),
    workers: related(
      Flags.integer({
        description:
          'Threads to run the cells of a sweep on (default: the available cores; 1 runs them in this thread). The result is the same for any number.',
        min: 1,
        max: 64,
        helpValue: 'N',
      }),
      {dependsOn: {flags: ['sweep'], why: 'it sets the threads of a sweep'}},
    ),
  }

  async run(): Promise<SimulationJson | SweepJson> {
    const {flags} = await this.parse(Simulate)
    checkOutputName('--svg', flags.svg)
    checkOutputName('--html', flags.html)
    if (flags.sweep) {
      // A flag the sweep would overwrite in every cell is a contradiction, not a base value. Not
      // declared with oclif: whether a flag clashes depends on the parameter --sweep names.
      const swept = new Set(flags.sweep.map((spec) => spec.split('=')[0]))
      const clash = (Object.entries(sweptByFlag) as Array<[keyof typeof sweptByFlag, string]>).find(
        ([flag, param]) => flags[flag] !== undefined && swept.has(param),
      )
      if (clash) throw new InputError(`--${clash[0]}: the sweep varies ${clash[1]}; leave out --${clash[0]} or its --sweep`)
    }
    const {scenario: loaded} = loadScenario(flags.scenario, {
      servers: flags.servers,
      capacity: flags.capacity,
      demand: flags.demand,
      broken: flags.broken,
      faultAt: flags['fault-at'],
      fixAt: flags['fix-at'],
      duration: flags.duration,
      seed: flags.seed,
    })
    const scenario = withRandomness(loaded, flags.randomness)
    const custom = flags.policy === undefined ? [] : [{name: 'custom', policy: parsePolicy(flags.policy)}]
    // A sweep is a map of every setup unless told which; a single run shows the first.
    const byDefault = flags.sweep ? pickSetups(scenario, 'all') : pickSetups(scenario, 'all').slice(0, 1)
    const named = flags.compare ? pickSetups(scenario, 'all') : flags.setup ? pickSetups(scenario, flags.setup) : custom.length > 0 ? [] : byDefault
    const setups = [...named, ...custom]
    if (flags.sweep) return this.sweep(scenario, setups, flags.sweep, flags)

    const report = simulateSetups(scenario, setups, flags.seeds ?? defaultSeeds(scenario))
    if (flags.svg) this.save('--svg', flags.svg, simulationSvg(report), 'chart')
    if (flags.html) this.save('--html', flags.html, simulationHtml(report), 'page')
    if (!this.jsonEnabled()) {
      const width = Math.max(40, Math.min(100, (process.stdout.columns ?? 100) - 16))
      this.log(renderSimulation(report, {color: this.color, width, tableWidth: outputWidth()}))
    }
    return simulationJson(report)
  }

  private async sweep(
    scenario: Scenario,
    setups: Array<{name: string; policy: Policy}>,
    specs: string[],
    flags: {svg?: string; html?: string; workers?: number},
  ): Promise<SweepJson> {
    const axes = buildAxes(specs, scenario, setups.length)
    const workers = flags.workers ?? defaultWorkers()
    const runner = cellRunner({scenario, setups, params: axes.map((a) => a.param.name)}, workers)
    const mode = chooseMode({json: this.jsonEnabled()})
    const status = mode === 'silent' ? undefined : new StatusLine((text) => process.stderr.write(text), mode === 'tty')
    let result
    try {
      result = await runSweep(scenario, setups, axes, runner, status && sweepProgress(status))
    } finally {
      status?.end()
      await runner.close()
    }
    if (flags.svg) this.save('--svg', flags.svg, sweepSvg(result), 'maps')
    if (flags.html) this.save('--html', flags.html, sweepHtml(result), 'page')
    if (!this.jsonEnabled()) this.log(renderSweep(result, {color: this.color, width: process.stdout.columns ?? 160}))
    return sweepJson(result)
  }

  /** Writes a report the caller has already built, so only a failed write is reported as one. */
  private save(flag: string, file: string, content: string, what: string): void {
    writeOutput(flag, file, content)
    this.note(`${what} saved to ${file}`)
  }
}
