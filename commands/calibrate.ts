import {Flags} from '@oclif/core'
import {SluiceCommand} from '../src/cli/base.js'
import {awsFlags, awsOptionsOf, seconds} from '../src/cli/flags.js'
import {writeOutput} from '../src/cli/output-file.js'
import {InputError} from '../src/errors.js'
import type {Calibration} from '../src/calibrate/calibrate.js'
import {formatTable} from '../src/report/table.js'

/** CloudWatch keeps one-minute points for 15 days and five-minute ones for 63. */
const maxWindow = 63 * 86_400

export default class Calibrate extends SluiceCommand {
  static override summary = 'Fit a scenario to a live pool from its settings and metrics.'

  static override description = `Reads a pool's settings (an ALB target group's health checks, slow start, deregistration delay and routing failover, from ELBv2) and its metrics over a window (requests, errors, healthy targets and response time, from CloudWatch), and writes a scenario that simulate, rehearsals, drills and assess read: the servers, each one's capacity (the plateau of served against offered where the window overloaded the pool, else the knee where latency leaves its floor, else a lower bound), demand as a curve over the window, the checks and guards as configured. Every figure has a comment saying how it was come by (read, measured, fitted with its 90% interval, a bound, or assumed) and what cannot be seen in the metrics is said and assumed (client retries and timeouts, traffic types). Read-only.

Without --out the scenario goes to stdout and the table of figures to stderr; with --out, the table to stdout. --json gives every figure with its interval, what was assumed, and the scenario.`

  static override examples = [
    '<%= config.bin %> <%= command.id %> --target-group arn:aws:elasticloadbalancing:eu-west-1:123:targetgroup/mailbox/abc --load-balancer app/outlook-edge/def --window 24h --out mailbox.yaml',
  ]

  static override flags = {
    'target-group': Flags.string({description: "The pool's target group ARN.", helpValue: 'ARN', required: true}),
    'load-balancer': Flags.string({description: "The load balancer's CloudWatch dimension, app/NAME/ID.", helpValue: 'app/NAME/ID', required: true}),
    window: seconds({description: 'How far back to read (default 24h; at most 63 days).', min: 600, max: maxWindow}),
    until: Flags.string({description: 'The end of the window, an ISO 8601 time (default: now).', helpValue: 'TIME'}),
    period: Flags.integer({
      description: 'Seconds per period, a multiple of 60 (default 60; 300 for a window over 15 days, as CloudWatch keeps no finer).',
      min: 60,
      max: 3600,
    }),
    pool: Flags.string({description: "The pool's name in the scenario (default: the target group's name).", helpValue: 'NAME'}),
    name: Flags.string({description: "The scenario's name (default: calibrated-POOL).", helpValue: 'NAME'}),
    out: Flags.string({char: 'o', description: 'Write the scenario to this file (default: stdout).', helpValue: 'FILE'}),
    ...awsFlags,
  }

  async run(): Promise<Calibration & {file?: string}> {
    const {flags} = await this.parse(Calibrate)
    const end = flags.until === undefined ? new Date() : new Date(flags.until)
    if (Number.isNaN(end.getTime())) throw new InputError(`--until: expected an ISO 8601 time such as 2026-12-04T06:00:00Z but received: ${flags.until}`)
    const window = flags.window ?? 86_400
    const period = flags.period ?? (window > 15 * 86_400 ? 300 : 60)
    if (period % 60 !== 0) throw new InputError(`--period: expected a multiple of 60 s (CloudWatch's periods for these metrics) but received: ${period}`)
    if (window > 15 * 86_400 && period < 300)
      throw new InputError(`--period: CloudWatch keeps one-minute points for 15 days only; a window of ${window} s needs --period 300 or more`)
    const group = /targetgroup\/([^/]+)\//.exec(flags['target-group'])?.[1]
    if (!group)
      throw new InputError(
        `--target-group: expected a target group ARN (arn:aws:elasticloadbalancing:REGION:ACCOUNT:targetgroup/NAME/ID) but received: ${flags['target-group']}`,
      )
    if (!/^app\/[^/]+\/[^/]+$/.test(flags['load-balancer']))
      throw new InputError(`--load-balancer: expected the load balancer's dimension app/NAME/ID but received: ${flags['load-balancer']}`)
    const pool = flags.pool ?? group.toLowerCase().replace(/[^a-z0-9-]/g, '-')
    if (!/^[a-z0-9][a-z0-9-]*$/.test(pool)) throw new InputError(`--pool: expected a lower-case name of letters, digits and dashes but received: ${pool}`)
    const [{poolReadings}, {calibrate, figureRows}] = await Promise.all([import('../src/wiring/readings.js'), import('../src/calibrate/calibrate.js')])
    const {readings, close} = poolReadings({targetGroup: flags['target-group'], loadBalancer: flags['load-balancer']}, awsOptionsOf(flags))
    let calibration: Calibration
    try {
      this.progress(`reading ${readings.source}, ${new Date(end.getTime() - window * 1000).toISOString()} to ${end.toISOString()} in periods of ${period} s`)
      calibration = await calibrate(readings, {start: new Date(end.getTime() - window * 1000), end, period, pool, name: flags.name ?? `calibrated-${pool}`})
    } finally {
      close()
    }
    const table = formatTable(['figure', 'value', '90%', 'how', 'from'], figureRows(calibration), {width: this.width, free: [4], wrap: true})
    const summary = [
      `${calibration.settings.label}, ${calibration.window.periods} periods of ${period} s:`,
      table,
      '',
      ...calibration.assumed.map((a) => `assumed: ${a}`),
    ].join('\n')
    if (flags.out) {
      writeOutput('--out', flags.out, calibration.scenario)
      this.log(summary)
      this.log(
        `\nwrote ${flags.out}: \`sluice simulate --scenario ${flags.out}\` runs it, \`sluice assess --scenario ${flags.out}\` places the pool on its map`,
      )
      return {...calibration, file: flags.out}
    }
    this.note(summary)
    if (!this.jsonEnabled()) process.stdout.write(calibration.scenario)
    return calibration
  }
}
