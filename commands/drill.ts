import {Args, Flags} from '@oclif/core'
import {SluiceCommand} from '../src/cli/base.js'
import {decimal} from '../src/cli/flags.js'
import {checkOutputName, writeOutput} from '../src/cli/output-file.js'
import {runDrillCommand} from '../src/cli/drill-run.js'
import {
  drillAgrees,
  drillHtml,
  drillJson,
  drillRepeatsJson,
  drillSvg,
  renderDrill,
  renderRepeats,
  type DrillJson,
  type DrillRepeatsJson,
} from '../src/report/drill.js'
import {summarizeRepeats} from '../src/drill/repeats.js'
import {spreadSeeds} from '../src/drill/verdict.js'

export default class Drill extends SluiceCommand {
  static override summary =
    "Run a scenario, or a runbook against it, for real: HAProxy, a loopback fleet and open-loop load, beside the simulator's prediction."

  static override description = `Starts HAProxy (the system's, from the PATH), a fleet of servers on loopback and a load generator, all on 127.0.0.1, with the scenario's numbers scaled to fit this machine: a rate scale (capacities and demand) and a time scale (the timeline, checks, timeouts, the runbook's bakes and gates), both printed. It plays the scenario's faults at their times and, for a runbook, runs its steps on HAProxy's Runtime API from its rehearsal start. Then it stops every process it started, Ctrl-C included, and prints the real timeline beside the simulator's prediction of the same scenario and setup: a table of served during the fault, requests lost, seconds to full service after the fix and fewest servers in rotation, and the same chart with both lines.

A runbook must name targets.haproxy (runbooks/outlook-staged-return-haproxy.yaml); its pools are the drill's backends, and its restart hooks restart the fleet's servers. A scenario's health checks must be HAProxy's (healthCheck kind haproxy).

Exit code: a runbook's real run decides it, as \`sluice run\` does; a scenario's drill exits 0 once it has run. 130 after Ctrl-C, with the figures of what ran.`

  static override examples = [
    '<%= config.bin %> <%= command.id %> drill-headroom',
    '<%= config.bin %> <%= command.id %> outlook-2026-haproxy --setup no-guard',
    '<%= config.bin %> <%= command.id %> outlook-staged-return-haproxy --svg drill.svg',
    '<%= config.bin %> <%= command.id %> ./my-scenario.yaml --rate-scale 0.05 --time-scale 0.2 --json',
    '<%= config.bin %> <%= command.id %> ./my-scenario.yaml --model calibrated.yaml',
  ]

  static override args = {
    target: Args.string({description: 'A runbook or scenario: a shipped name (`sluice runbooks`) or a YAML file.', required: true}),
  }

  static override flags = {
    setup: Flags.string({description: "The scenario's setup (default: the runbook's rehearsal setup, else the scenario's first).", helpValue: 'NAME'}),
    'rate-scale': decimal({
      description: 'Multiply every rate (capacities, demand) by this (default: the largest round scale that keeps demand within what this machine drives).',
      min: 0.0001,
      max: 1,
    }),
    'time-scale': decimal({
      description: 'Multiply every duration by this (default: the largest round scale that fits the drill into about 150 s).',
      min: 0.001,
      max: 1,
    }),
    'queue-seconds': decimal({
      description:
        "Seconds of work (at the server's capacity, in the scenario's time) each server queues before it stops reading requests (default: the scenario pool's queueSeconds; a pool without one queues without bound in the simulator, realised as twice the longer of the clients' timeout and the check interval). The prediction models the same queue.",
      min: 0,
      max: 600,
      helpValue: 'SECONDS',
    }),
    repeat: Flags.integer({
      description:
        "Run the real side this many times, each from a clean start, and judge the median of the runs against the prediction, with each figure's range.",
      min: 1,
      max: 10,
      default: 1,
      helpValue: 'N',
    }),
    seeds: Flags.integer({
      description:
        "Also predict over this many seeds, each drawing arrivals as the drill does: an outcome is judged by how often the seeds give what the real run showed, a figure against the range they give (0: the scenario's own prediction alone).",
      min: 0,
      max: 100,
      default: spreadSeeds,
      helpValue: 'N',
    }),
    svg: Flags.string({description: "Also save the chart as an SVG file (with --repeat, the median run's).", helpValue: 'FILE'}),
    html: Flags.string({
      description: "Also save a self-contained HTML page: the verdict, the figures and steps as tables, and the charts (with --repeat, the median run's).",
      helpValue: 'FILE',
    }),
    model: Flags.string({
      description:
        "Predict from this scenario's pool, checks and clients (one sluice calibrate wrote, say) with the drilled scenario's demand, faults and timeline; the real side still runs the drilled scenario. How a calibration is judged against a run it never saw.",
      helpValue: 'SCENARIO',
    }),
    socket: Flags.string({
      description: "Also open the drill's HAProxy admin socket at this path, for sluice calibrate or an operator to read while the drill runs.",
      helpValue: 'PATH',
    }),
    settle: decimal({
      description:
        "Scenario seconds each side runs on once its runbook has ended, for what follows it to show (default: the rehearsal's settle of 180 s, and at least 60 s after the real run's end). A drill about a gate's verdict needs little.",
      min: 0,
      max: 3600,
      helpValue: 'SECONDS',
    }),
    rollback: Flags.string({
      description:
        'Once the runbook has ended, roll its run back as `sluice rollback` would, on both sides: ramped (in steps onto the receiving pool, behind the gates) or now (at once), and report what the way back cost.',
      options: ['ramped', 'now'],
    }),
  }

  async run(): Promise<DrillJson | DrillRepeatsJson> {
    const {args, flags} = await this.parse(Drill)
    checkOutputName('--svg', flags.svg)
    checkOutputName('--html', flags.html)
    const {drills, outcome} = await runDrillCommand(args.target, {
      setup: flags.setup,
      scales: {
        ...(flags['rate-scale'] === undefined ? {} : {rateScale: flags['rate-scale']}),
        ...(flags['time-scale'] === undefined ? {} : {timeScale: flags['time-scale']}),
      },
      ...(flags['queue-seconds'] === undefined ? {} : {queueSeconds: flags['queue-seconds']}),
      repeat: flags.repeat,
      seeds: flags.seeds,
      ...(flags.model === undefined ? {} : {model: flags.model}),
      ...(flags.socket === undefined ? {} : {socket: flags.socket}),
      ...(flags.rollback ? {rollback: flags.rollback as 'ramped' | 'now'} : {}),
      ...(flags.settle === undefined ? {} : {settle: flags.settle}),
      json: this.jsonEnabled(),
      note: (text) => this.note(text),
    })
    const repeated = flags.repeat > 1
    const summary = repeated ? summarizeRepeats(drills) : null
    const charted = drills[summary?.representative ?? 0]
    if (flags.svg) {
      writeOutput('--svg', flags.svg, drillSvg(charted))
      this.note(`chart saved to ${flags.svg}`)
    }
    if (flags.html) {
      writeOutput('--html', flags.html, drillHtml(charted))
      this.note(`page saved to ${flags.html}`)
    }
    if (!this.jsonEnabled()) {
      const width = Math.max(40, Math.min(100, (process.stdout.columns ?? 100) - 16))
      this.log(
        summary
          ? renderRepeats(drills, {color: this.color, width, tableWidth: this.width})
          : renderDrill(charted, {color: this.color, width, tableWidth: this.width}),
      )
      const disagree = summary ? summary.verdict.kind === 'disagree' : drillAgrees(charted) === false
      if (disagree) this.note('the drill and the simulator disagree: see the table')
    }
    this.endWith(outcome)
    return repeated ? drillRepeatsJson(drills) : drillJson(charted)
  }
}
