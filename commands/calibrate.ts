import {Flags} from '@oclif/core'
import {SluiceCommand} from '../src/cli/base.js'
import {awsFlags, awsOptionsOf, prometheusFlags, prometheusOf, seconds} from '../src/cli/flags.js'
import {related} from '../src/cli/flag-relations.js'
import {writeOutput} from '../src/cli/output-file.js'
import {InputError} from '../src/errors.js'
import {onStopSignals} from '../src/cli/stop-signals.js'
import type {PoolSource} from '../src/wiring/readings.js'
import type {Calibration} from '../src/calibrate/calibrate.js'
import {formatTable} from '../src/report/table.js'

/** CloudWatch keeps one-minute points for 15 days and five-minute ones for 63. */
const maxWindow = 63 * 86_400

// The pool is named by a pair of flags, one pair of three: declared on the flags, so oclif
// refuses half a pair, two pools or none, and help says so beside each flag.
const alb = ['target-group', 'load-balancer']
const haproxyPool = ['haproxy', 'backend']
const prometheusPool = ['prometheus', 'mapping']
const onePool = {
  flags: ['target-group', 'haproxy', 'prometheus'],
  why: 'calibrate reads one pool: an ALB target group and its CloudWatch metrics, a HAProxy backend, or Prometheus through a mapping',
}
const notTwo = (flags: string[]) => ({flags, why: onePool.why})
const albPair = 'an ALB pool is named by both --target-group and --load-balancer'
const haproxyPair = 'a HAProxy pool is named by both --haproxy SOCKET and --backend NAME'

export default class Calibrate extends SluiceCommand {
  static override summary = 'Fit a scenario to a live pool from its settings and metrics.'

  static override description = `Reads a pool's settings and its metrics over a window, and writes a scenario that simulate, rehearsals, drills and assess read: the servers, each one's capacity (the plateau of served against offered where the window overloaded the pool, else the knee where latency leaves its floor, else a lower bound), demand as a curve over the window, the checks and guards as configured. Every figure has a comment saying how it was come by (read, measured, fitted with its 90% interval, a bound, or assumed) and what cannot be seen in the metrics is said and assumed (client retries and timeouts, traffic types). Read-only.

An ALB (--target-group, --load-balancer): its health checks, slow start, deregistration delay and routing failover from ELBv2, and requests, errors, healthy targets and response time from CloudWatch over the past --window.

A HAProxy backend (--haproxy, --backend): its servers, fall and rise from the Runtime API, inter, fastinter, downinter, slowstart, observe and timeout server from its configuration file, and its counters (requests, answers by status, servers up, response time) sampled every second from now for --window, since HAProxy keeps no history. Ctrl-C ends the window early and calibrates on what was read.

Prometheus (--prometheus, --mapping): requests, errors, servers in rotation and latency over the past --window through the queries a mapping file names (range queries, one step a period), and the checks the mapping gives, since Prometheus holds no load balancer's settings: the scenario says they were given, not read.

Without --out the scenario goes to stdout and the table of figures to stderr; with --out, the table to stdout. --json gives every figure with its interval, what was assumed, and the scenario.`

  static override examples = [
    '<%= config.bin %> <%= command.id %> --target-group arn:aws:elasticloadbalancing:eu-west-1:123:targetgroup/mailbox/abc --load-balancer app/outlook-edge/def --window 24h --out mailbox.yaml',
    '<%= config.bin %> <%= command.id %> --haproxy /run/haproxy/admin.sock --backend mailbox --window 10m --out mailbox.yaml',
    '<%= config.bin %> <%= command.id %> --prometheus http://prometheus:9090 --mapping mailbox-prometheus.yaml --window 24h --out mailbox.yaml',
  ]

  static override flags = {
    'target-group': related(Flags.string({description: "AWS: the pool's target group ARN.", helpValue: 'ARN'}), {
      dependsOn: {flags: ['load-balancer'], why: albPair},
      exclusive: notTwo([...haproxyPool, ...prometheusPool]),
      exactlyOne: onePool,
    }),
    'load-balancer': related(Flags.string({description: "AWS: the load balancer's CloudWatch dimension, app/NAME/ID.", helpValue: 'app/NAME/ID'}), {
      dependsOn: {flags: ['target-group'], why: albPair},
      exclusive: notTwo([...haproxyPool, ...prometheusPool]),
    }),
    haproxy: related(
      Flags.string({
        description:
          "HAProxy: its Runtime API (the stats socket's path, or HOST:PORT). It keeps counters, not history: calibrate samples it from now for --window.",
        helpValue: 'SOCKET',
      }),
      {dependsOn: {flags: ['backend'], why: haproxyPair}, exclusive: notTwo([...alb, ...prometheusPool]), exactlyOne: onePool},
    ),
    backend: related(Flags.string({description: 'HAProxy: the backend that is the pool.', helpValue: 'NAME'}), {
      dependsOn: {flags: ['haproxy'], why: haproxyPair},
      exclusive: notTwo([...alb, ...prometheusPool]),
    }),
    'haproxy-config': related(
      Flags.string({
        description:
          "HAProxy: its configuration file, for what the Runtime API does not show (inter, slowstart, timeouts); default: the running HAProxy's own, found through its pid on this machine.",
        helpValue: 'FILE',
      }),
      {dependsOn: {flags: haproxyPool, why: "it is read for a HAProxy pool, beside what that HAProxy's Runtime API shows"}},
    ),
    prometheus: related(prometheusFlags.prometheus, {exclusive: notTwo([...alb, ...haproxyPool]), exactlyOne: onePool}),
    mapping: related(prometheusFlags.mapping, {exclusive: notTwo([...alb, ...haproxyPool])}),
    window: seconds({
      description:
        'AWS and Prometheus: how far back to read (default 24h; AWS: at least 10m, at most 63 days). HAProxy: how long to sample from now (default 5m).',
      min: 10,
      max: maxWindow,
    }),
    until: related(Flags.string({description: 'AWS and Prometheus: the end of the window, an ISO 8601 time (default: now).', helpValue: 'TIME'}), {
      exclusive: {flags: haproxyPool, why: 'HAProxy keeps counters, not history; calibrate samples it from now for --window'},
    }),
    period: Flags.integer({
      description:
        'Seconds per period. AWS: a multiple of 60 (default 60; 300 for a window over 15 days, as CloudWatch keeps no finer). HAProxy: default a thirtieth of the window, 1 to 60. Prometheus: default 60, the step of its range queries and their $window.',
      min: 1,
      max: 3600,
    }),
    pool: Flags.string({
      description: "The pool's name in the scenario (default: the target group's or backend's name, or the mapping's pool).",
      helpValue: 'NAME',
    }),
    name: Flags.string({description: "The scenario's name (default: calibrated-POOL).", helpValue: 'NAME'}),
    out: Flags.string({char: 'o', description: 'Write the scenario to this file (default: stdout).', helpValue: 'FILE'}),
    ...awsFlags,
  }

  async run(): Promise<Calibration & {file?: string}> {
    const {flags} = await this.parse(Calibrate)
    const source = sourceOf(flags)
    const [{poolReadings}, {calibrate, figureRows}] = await Promise.all([import('../src/wiring/readings.js'), import('../src/calibrate/calibrate.js')])
    const {readings, pool, close} = poolReadings(source.pool, awsOptionsOf(flags), {
      onSample: (elapsed, total) => this.progress(`sampling ${pool}: ${Math.round(elapsed)} s of ${Math.round(total)} s`),
    })
    const poolName = flags.pool ?? pool.toLowerCase().replace(/[^a-z0-9-]/g, '-')
    if (!/^[a-z0-9][a-z0-9-]*$/.test(poolName)) {
      close()
      throw new InputError(`--pool: expected a lower-case name of letters, digits and dashes but received: ${poolName}`)
    }
    // Ctrl-C while sampling HAProxy ends the window there: the calibration is of what was read.
    const stop = onStopSignals((text) => this.note(text), 'calibrating on what was read so far')
    let calibration: Calibration
    try {
      this.progress(`reading ${readings.source}, ${source.start.toISOString()} to ${source.end.toISOString()} in periods of ${source.period} s`)
      calibration = await calibrate(
        readings,
        {start: source.start, end: source.end, period: source.period, pool: poolName, name: flags.name ?? `calibrated-${poolName}`},
        stop.signal,
      )
    } finally {
      stop.release()
      close()
    }
    const period = source.period
    const table = formatTable(['figure', 'value', '90%', 'how', 'from'], figureRows(calibration), {width: this.width, free: [0, 4], wrap: true})
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

type CalibrateFlags = {
  'target-group'?: string
  'load-balancer'?: string
  haproxy?: string
  backend?: string
  'haproxy-config'?: string
  prometheus?: string
  mapping?: string
  window?: number
  until?: string
  period?: number
}

/**
 * Which pool the flags name, and the window and periods to read it over: AWS's or Prometheus's
 * past, or HAProxy's next few minutes. oclif has refused flags that name no pool, two, or half of
 * one (the relations declared on them); what is checked here depends on the pool and the values.
 */
function sourceOf(flags: CalibrateFlags): {pool: PoolSource; start: Date; end: Date; period: number} {
  const prometheus = prometheusOf(flags)
  if (prometheus) {
    const end = untilOf(flags.until)
    const window = flags.window ?? 86_400
    const period = flags.period ?? 60
    if (period * 3 > window) throw new InputError(`--period: ${period} s gives fewer than three periods in a window of ${window} s`)
    return {pool: {kind: 'prometheus', ...prometheus}, start: new Date(end.getTime() - window * 1000), end, period}
  }
  if (flags.haproxy !== undefined && flags.backend !== undefined) {
    const window = flags.window ?? 300
    const period = flags.period ?? Math.max(1, Math.min(60, Math.round(window / 30)))
    if (period * 3 > window) throw new InputError(`--period: ${period} s gives fewer than three periods in a window of ${window} s`)
    const start = new Date()
    return {
      pool: {
        kind: 'haproxy',
        socket: flags.haproxy,
        backend: flags.backend,
        ...(flags['haproxy-config'] === undefined ? {} : {config: flags['haproxy-config']}),
      },
      start,
      end: new Date(start.getTime() + window * 1000),
      period,
    }
  }
  const targetGroup = flags['target-group']!
  const loadBalancer = flags['load-balancer']!
  const end = untilOf(flags.until)
  const window = flags.window ?? 86_400
  if (window < 600) throw new InputError(`--window: expected at least 600 s (ten of CloudWatch's one-minute periods) but received: ${window}`)
  const period = flags.period ?? (window > 15 * 86_400 ? 300 : 60)
  if (period % 60 !== 0) throw new InputError(`--period: expected a multiple of 60 s (CloudWatch's periods for these metrics) but received: ${period}`)
  if (window > 15 * 86_400 && period < 300)
    throw new InputError(`--period: CloudWatch keeps one-minute points for 15 days only; a window of ${window} s needs --period 300 or more`)
  const group = /targetgroup\/([^/]+)\//.exec(targetGroup)?.[1]
  if (!group)
    throw new InputError(
      `--target-group: expected a target group ARN (arn:aws:elasticloadbalancing:REGION:ACCOUNT:targetgroup/NAME/ID) but received: ${targetGroup}`,
    )
  if (!/^app\/[^/]+\/[^/]+$/.test(loadBalancer))
    throw new InputError(`--load-balancer: expected the load balancer's dimension app/NAME/ID but received: ${loadBalancer}`)
  return {
    pool: {kind: 'alb', targetGroup, loadBalancer},
    start: new Date(end.getTime() - window * 1000),
    end,
    period,
  }
}

/** The end of a window that reads the past: --until, or now. */
function untilOf(until: string | undefined): Date {
  const end = until === undefined ? new Date() : new Date(until)
  if (Number.isNaN(end.getTime())) throw new InputError(`--until: expected an ISO 8601 time such as 2026-12-04T06:00:00Z but received: ${until}`)
  return end
}
