import {Flags} from '@oclif/core'
import {writeFileSync} from 'node:fs'
import {SluiceCommand} from '../src/cli/base.js'
import {decimal, scenarioFlag, seconds} from '../src/cli/flags.js'
import {InputError} from '../src/errors.js'
import {renderSimulation, simulationSvg} from '../src/report/simulation.js'
import {loadScenario, parsePolicy, pickSetups} from '../src/sim/scenario/load.js'
import {scenarioLimits} from '../src/sim/scenario/schema.js'
import {simulateSetups, simulationJson, type SimulationJson} from '../src/sim/simulate.js'

export default class Simulate extends SluiceCommand {
  static override summary = 'Simulate a pool under a fault and compare load-balancer setups.'

  static override description = `Runs a scenario (a fleet, its demand, its faults and one or more load-balancer setups) in virtual time and reports, per setup, the completed requests per second during the fault, the requests lost, how long after the fix the pool was back at full service, and the fewest servers left in rotation, followed by a chart.

Full service means completed requests within 1% of demand from that second to the end of the run.`

  static override examples = [
    '<%= config.bin %> <%= command.id %> --scenario outlook-2026 --compare',
    '<%= config.bin %> <%= command.id %> --scenario outlook-2026 --setup panic-50 --svg panic.svg',
    '<%= config.bin %> <%= command.id %> --scenario outlook-2026 --policy maxEjectionPercent=33,shed=true,slowStart=60',
    '<%= config.bin %> <%= command.id %> --scenario ./my-fleet.yaml --broken 8 --demand 1000 --json',
  ]

  static override flags = {
    broken: Flags.integer({description: 'Servers the first broken fault breaks.', min: 0, max: scenarioLimits.maxServers}),
    capacity: decimal({description: 'Requests per second one server of the first pool completes.'}),
    compare: Flags.boolean({description: 'Run every setup the scenario declares, side by side.', default: false}),
    demand: decimal({description: 'Constant demand in requests per second (replaces the scenario\'s curve).'}),
    duration: seconds({description: 'How long to simulate.', min: scenarioLimits.minTick, max: scenarioLimits.maxSeconds}),
    'fault-at': seconds({description: 'When the first broken fault starts.', max: scenarioLimits.maxSeconds}),
    'fix-at': seconds({description: 'When the first broken fault is fixed.', max: scenarioLimits.maxSeconds}),
    policy: Flags.string({description: 'A custom setup as key=value pairs: maxEjectionPercent, panicThreshold, shed, slowStart, slowStartMinWeightPercent.', helpValue: 'KEY=VALUE,...'}),
    scenario: scenarioFlag,
    seed: Flags.integer({description: 'Seed for every random draw.'}),
    servers: Flags.integer({description: 'Servers in the first pool.', min: 1, max: scenarioLimits.maxServers}),
    setup: Flags.string({description: 'A setup the scenario declares (repeatable). Default: the first one.', multiple: true, helpValue: 'NAME'}),
    svg: Flags.string({description: 'Also save the chart as an SVG file.', helpValue: 'FILE'}),
  }

  async run(): Promise<SimulationJson> {
    const {flags} = await this.parse(Simulate)
    if (flags.compare && flags.setup) throw new InputError('--compare runs every setup; leave out --setup, or drop --compare')
    const {scenario} = loadScenario(flags.scenario, {
      servers: flags.servers,
      capacity: flags.capacity,
      demand: flags.demand,
      broken: flags.broken,
      faultAt: flags['fault-at'],
      fixAt: flags['fix-at'],
      duration: flags.duration,
      seed: flags.seed,
    })
    const custom = flags.policy === undefined ? [] : [{name: 'custom', policy: parsePolicy(flags.policy)}]
    const named = flags.compare ? pickSetups(scenario, 'all') : flags.setup ? pickSetups(scenario, flags.setup) : custom.length > 0 ? [] : pickSetups(scenario, 'all').slice(0, 1)
    const report = simulateSetups(scenario, [...named, ...custom])

    if (flags.svg) {
      try {
        writeFileSync(flags.svg, simulationSvg(report))
      } catch (error) {
        throw new InputError(`--svg: cannot write ${flags.svg}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`)
      }
      this.note(`chart saved to ${flags.svg}`)
    }
    if (!this.jsonEnabled()) {
      const width = Math.max(40, Math.min(100, (process.stdout.columns ?? 100) - 16))
      this.log(renderSimulation(report, {color: this.color, width}))
    }
    return simulationJson(report)
  }
}
