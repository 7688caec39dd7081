import {FailedError, InputError} from '../errors.js'
import {validate, YamlSource} from '../input/yaml-source.js'
import type {PoolReadings, PoolSettings} from '../ports/pool-readings.js'
import {checkRate} from '../ports/reading-bounds.js'
import {scenarioSchema} from '../sim/scenario/schema.js'
import {fitCapacity, fitDemand, fitQueue, fitServiceTime, type CapacityFit, type Estimate} from './fit.js'

/** What `sluice calibrate` reads over, and what it names the scenario's pool. */
export interface CalibrateOptions {
  start: Date
  end: Date
  /** Seconds per period: 60 at least (CloudWatch's finest for these metrics). */
  period: number
  /** The pool's name in the scenario. */
  pool: string
  /** The scenario's name. */
  name: string
  seed?: number
}

/** Every figure of a calibration, each with where it came from and how sure it is. */
export interface CalibrationFigures {
  servers: Estimate
  capacity: Estimate & {method: CapacityFit['method']; periodsPastIt: number}
  demandMean: Estimate
  demandPeak: Estimate
  /** Mean seconds to an answer where each server was offered least: the servers' own service time (fitServiceTime). */
  serviceTime: Estimate | null
  /** Seconds of work a server queues before it turns requests away; null where the window does not show it (fitQueue). */
  queue: Estimate | null
  errorRate: Estimate
  interval: Estimate
  /** Failed and passed checks; null where the family has none (Envoy's outlier detection ejects for a time). */
  fall: Estimate | null
  rise: Estimate | null
  slowStart: Estimate
  /** Null where not known (a mapping that leaves it out, Envoy). */
  drainDelay: Estimate | null
  /** Null for HAProxy from a mapping: it has no such guard, and nobody gave one. */
  failoverPercent: Estimate | null
  /** Envoy's ejection: how long the first lasts, the longest, and the most of the pool out at once; null for the other families. */
  baseEjection: Estimate | null
  maxEjection: Estimate | null
  maxEjectionPercent: Estimate | null
  attempts: Estimate
  timeout: Estimate
}

export interface Calibration {
  source: string
  window: {start: string; end: string; period: number; periods: number; readSeconds: number}
  settings: PoolSettings
  figures: CalibrationFigures
  /** What the metrics cannot show, and what the scenario assumes instead. */
  assumed: string[]
  /** The scenario, as YAML with a comment on every figure. */
  scenario: string
}

/** sluice's client defaults (src/sim/scenario/schema.ts): what a calibration assumes where the metrics show no clients. */
const assumedClients = {attempts: 1, timeout: 5}

/**
 * Fits a scenario to a live pool: its settings read back, its capacity and demand from its
 * metrics over the window, and what cannot be seen in them said and assumed. The scenario is the
 * one `simulate`, rehearsals, drills and `assess` read.
 */
export async function calibrate(readings: PoolReadings, options: CalibrateOptions, signal?: AbortSignal): Promise<Calibration> {
  const settings = await readings.settings(signal)
  const periods = await readings.history(options.start, options.end, options.period, signal)
  if (periods.length === 0)
    throw new FailedError(
      `no requests recorded for ${settings.label} between ${options.start.toISOString()} and ${options.end.toISOString()}: nothing to calibrate on`,
    )
  // Each source checked its own readings; only here are the servers known beside the history:
  // a period no pool of this many servers could be sent is a broken query or counter, not load.
  for (const p of periods)
    checkRate(p.requests / options.period, {source: readings.source, what: `requests a second in the period from ${iso(p.at)}`}, settings.servers)
  const [capacity, demand] = named(
    readings.source,
    () => [fitCapacity(periods, options.period, options.seed ?? 1), fitDemand(periods, options.period)] as const,
  )
  // A setting read back from the load balancer, or given by the operator where its metrics hold none (Prometheus).
  const read = (value: number, name: string): Estimate => ({value, how: settings.given ? 'given' : 'read', source: name})
  const maybe = (value: number | null, name: string): Estimate | null => (value === null ? null : read(value, name))
  const serviceTime = fitServiceTime(periods, options.period)
  const errors = periods.reduce((s, p) => s + p.errors, 0) / periods.reduce((s, p) => s + p.requests, 0)
  const alb = settings.family === 'alb'
  const envoy = settings.envoy
  const queue = serviceTime === null ? null : fitQueue(periods, options.period, capacity.capacity.value, serviceTime.value)
  const figures: CalibrationFigures = {
    servers: settings.given
      ? {value: settings.servers, ...settings.given.servers}
      : {value: settings.servers, how: 'read', source: `registered now (${settings.healthy} healthy)`},
    capacity: {...capacity.capacity, method: capacity.method, periodsPastIt: capacity.pastKnee},
    demandMean: demand.mean,
    demandPeak: demand.peak,
    serviceTime,
    queue,
    errorRate: {value: round(errors * 100, 2), how: 'measured', source: `errors over requests across the window, percent`},
    interval: read(settings.interval, settings.names.interval),
    fall: maybe(settings.fall, settings.names.fall),
    rise: maybe(settings.rise, settings.names.rise),
    slowStart: read(settings.slowStart, settings.names.slowStart),
    drainDelay: maybe(settings.drainDelay, settings.names.drainDelay),
    failoverPercent:
      settings.failoverPercent !== null
        ? read(settings.failoverPercent, settings.names.failoverPercent)
        : settings.family === 'haproxy' && settings.given
          ? null
          : {
              value: alb ? 1 : 0,
              how: settings.given ? 'given' : 'read',
              source: `${settings.names.failoverPercent} is off${alb ? '; an ALB still routes to every target when none is healthy (fail open)' : ''}`,
            },
    baseEjection: envoy ? read(envoy.baseEjection, envoy.names.baseEjection) : null,
    maxEjection: envoy ? read(envoy.maxEjection, envoy.names.maxEjection) : null,
    maxEjectionPercent: envoy ? read(envoy.maxEjectionPercent, envoy.names.maxEjectionPercent) : null,
    attempts: {value: assumedClients.attempts, how: 'assumed', source: 'a load balancer counts requests, not the clients that retry them'},
    timeout: {value: assumedClients.timeout, how: 'assumed', source: "the clients' own timeout is not in the load balancer's metrics"},
  }
  const assumed = [
    `clients: ${assumedClients.attempts} attempt, ${assumedClients.timeout} s timeout (sluice's defaults): retries and client timeouts are not in these metrics; set clients: in the scenario if you know them`,
    'demand: one traffic type (all): the metrics do not split it by type; name types under demand.types to weigh restricting one',
    checksAssumed(settings),
    ...(capacity.method === 'lower-bound' ? ['capacity: a lower bound only: the window never loaded the pool enough to show its limit'] : []),
    ...(queue === null
      ? ["queue: unbounded (the model's default): the window never held a server past its capacity long enough to show how much it queues"]
      : []),
    ...(readings.notes ?? []),
  ]
  const calibration = {
    source: readings.source,
    window: {
      start: options.start.toISOString(),
      end: options.end.toISOString(),
      period: options.period,
      periods: periods.length,
      readSeconds: periods[periods.length - 1].at + options.period - periods[0].at,
    },
    settings,
    figures,
    assumed,
    scenario: '',
  }
  const scenario = scenarioText(calibration, options, demand.curve)
  refuseUnloadable(scenario, readings.source)
  return {...calibration, scenario}
}

/** A fit that finds nothing to fit on says so for the source it read. */
function named<T>(source: string, fit: () => T): T {
  try {
    return fit()
  } catch (error) {
    if (error instanceof FailedError) throw new FailedError(`${source}: ${error.message}`)
    throw error
  }
}

/** Where the scenario calibrate would write is checked (an error names it this way). */
const scenarioName = '(the calibrated scenario)'

/**
 * The scenario checked against the schema `simulate` loads it with, before anything is written:
 * a figure it would refuse (a capacity of NaN, servers past what the model holds, more servers ×
 * ticks than a run can step through) ends calibrate with exit 1, naming the figure, its value, and
 * where it came from (the comment calibrate writes above every figure), rather than a file that
 * simulate, rehearsals and assess then refuse.
 */
function refuseUnloadable(text: string, readFrom: string): void {
  try {
    const source = YamlSource.parse(scenarioName, text)
    validate(scenarioSchema, source.data(), source)
  } catch (error) {
    if (!(error instanceof InputError)) throw error
    const problem = error.problems[0] ?? error.message
    const line = Number(/^[^:]+:(\d+):\d+: /.exec(problem)?.[1] ?? 0)
    const lines = text.split('\n')
    const written = line > 0 ? lines[line - 1].trim() : ''
    // The figure's comment, the line above it: how it was come by, and from what.
    const above = line > 1 ? lines[line - 2] : ''
    const comment = /^\s*# /.test(above) ? above : undefined
    throw new FailedError(
      `${readFrom}: calibrate would write a scenario simulate refuses, so it writes nothing: ${problem.replace(/^[^:]+:\d+:\d+: /, '')}${
        written && !written.startsWith('#')
          ? ` (it would write \`${written.length > 120 ? `${written.slice(0, 119)}…` : written}\`${comment ? `, ${comment.trim().replace(/^# /, '')}` : ''})`
          : ''
      }`,
    )
  }
}

/** What the scenario's checks make of the family's own: the one sentence of assumption about them. */
function checksAssumed(s: PoolSettings): string {
  const how = s.given ? 'as given' : 'as read'
  if (s.family === 'haproxy') return `checks: HAProxy rules (inter, fall, rise), ${how}`
  if (s.family === 'envoy')
    return `checks: Envoy's outlier detection (interval, ejection times, max ejection percent), ${how}; the model ejects a server at the first pass it fails (Envoy: after its consecutive errors)`
  return `checks: the model takes a server out at its first failed check (ALB: after ${s.fall}) and back after ${s.rise} passed checks (${(s.rise ?? 1) * s.interval} s)`
}

const iso = (seconds: number): string => new Date(seconds * 1000).toISOString().replace(/\.000Z$/, 'Z')

const round = (v: number, places = 1): number => Math.round(v * 10 ** places) / 10 ** places

const interval = (e: Estimate): string => (e.low !== undefined && e.high !== undefined && e.high > e.low ? ` (90%: ${round(e.low)}–${round(e.high)})` : '')

/** A comment line per figure: how it was come by, and from what. */
const said = (e: Estimate, indent: string): string => `${indent}# ${e.how}${interval(e)}: ${e.source}`

/** The scenario as YAML, every figure with its comment; it loads as any scenario does (tests load it). */
function scenarioText(c: Omit<Calibration, 'scenario'>, options: CalibrateOptions, curve: Array<[number, number]>): string {
  const f = c.figures
  const s = c.settings
  // The span the demand curve covers: a HAProxy that stopped answering ends the window early.
  const duration = Math.max(60, Math.round(curve.length === 0 ? 0 : c.window.readSeconds))
  const alb = s.family === 'alb'
  const lines = [
    `# Calibrated by sluice calibrate from ${c.source},`,
    `# ${c.window.start} to ${c.window.end}: ${c.window.periods} periods of ${c.window.period} s. ${
      s.given ? `Settings given by the operator in ${s.given.from}.` : `Settings read from ${s.label}.`
    }`,
    `# Each figure says how it was come by: ${s.given ? 'given (a setting the operator wrote down)' : 'read (a setting, read back)'}, measured (from the metrics),`,
    '# fitted (estimated, with its 90% interval), bound (a limit, not a value), assumed (not in these metrics).',
    ...c.assumed.map((a) => `# assumed: ${a}`),
    `name: ${options.name}`,
    `description: ${JSON.stringify(`${s.label}, calibrated from its metrics`)}`,
    `# measured: the span of the window read (--window), ${c.window.periods} periods of ${c.window.period} s`,
    `duration: ${duration}`,
    `# ${s.given ? `given: family in ${s.given.from}` : 'read'}: what fronts the pool; assess offers its levers to a pool described by hand`,
    `frontedBy: ${s.family}`,
    'pools:',
    `  - name: ${options.pool}`,
    said(f.servers, '    '),
    `    servers: ${f.servers.value}`,
    said(f.capacity, '    '),
    `    capacity: ${round(f.capacity.value)}`,
    ...(f.serviceTime ? [said(f.serviceTime, '    '), `    serviceTime: ${Math.max(0.001, f.serviceTime.value)}`] : []),
    ...(f.queue ? [said(f.queue, '    '), `    queueSeconds: ${Math.max(0.01, f.queue.value)}`] : []),
    'demand:',
    `  # measured: requests a second over the window, as ${curve.length} points (mean ${f.demandMean.value} rps, peak ${f.demandPeak.value} rps)`,
    `  curve: [${curve.map(([t, v]) => `[${t}, ${v}]`).join(', ')}]`,
    'healthCheck:',
    ...(s.family === 'envoy'
      ? envoyCheckLines(f)
      : alb
        ? [
            said(f.interval, '  '),
            `  interval: ${f.interval.value}`,
            `  # ${f.interval.how}: a server is back after ${f.rise!.value} passed checks (${s.names.rise}) × ${f.interval.value} s; an ALB does not lengthen it for a server taken out again`,
            `  baseEjection: ${f.rise!.value * f.interval.value}`,
            `  maxEjection: ${f.rise!.value * f.interval.value}`,
          ]
        : [
            '  kind: haproxy',
            said(f.interval, '  '),
            `  inter: ${f.interval.value}`,
            said(f.fall!, '  '),
            `  fall: ${f.fall!.value}`,
            said(f.rise!, '  '),
            `  rise: ${f.rise!.value}`,
            said(f.slowStart, '  '),
            `  slowstart: ${f.slowStart.value}`,
            ...haproxyLines(s),
          ]),
    'clients:',
    said(f.attempts, '  '),
    `  attempts: ${f.attempts.value}`,
    said(f.timeout, '  '),
    `  timeout: ${f.timeout.value}`,
    'setups:',
    '  as-configured:',
    ...(s.family === 'envoy'
      ? envoySetupLines(f, s)
      : alb
        ? [
            said(f.failoverPercent!, '    '),
            `    panicThreshold: ${f.failoverPercent!.value}`,
            ...(f.slowStart.value > 0 ? [said(f.slowStart, '    '), `    slowStart: ${f.slowStart.value}`] : []),
          ]
        : ['    {}']),
  ]
  return `${lines.join('\n').replace('  as-configured:\n    {}', '  as-configured: {}')}\n`
}

/** Envoy's outlier detection, as the scenario's (Envoy-style, its default) healthCheck has it. */
function envoyCheckLines(f: CalibrationFigures): string[] {
  return [
    said(f.interval, '  '),
    `  interval: ${f.interval.value}`,
    said(f.baseEjection!, '  '),
    `  baseEjection: ${f.baseEjection!.value}`,
    said(f.maxEjection!, '  '),
    `  maxEjection: ${f.maxEjection!.value}`,
  ]
}

/** Envoy's cluster guards, as the setup the pool runs with: panic threshold, ejection cap, slow start. */
function envoySetupLines(f: CalibrationFigures, s: PoolSettings): string[] {
  const e = s.envoy!
  return [
    said(f.failoverPercent!, '    '),
    `    panicThreshold: ${f.failoverPercent!.value}`,
    said(f.maxEjectionPercent!, '    '),
    `    maxEjectionPercent: ${f.maxEjectionPercent!.value}`,
    ...(f.slowStart.value > 0 ? [said(f.slowStart, '    '), `    slowStart: ${f.slowStart.value}`] : []),
    // Envoy's default and the simulator's are the same 10%: written only where it was set otherwise.
    ...(f.slowStart.value > 0 && e.slowStartMinWeightPercent !== 10
      ? [`    # ${s.given ? 'given' : 'read'}: ${e.names.slowStartMinWeightPercent}`, `    slowStartMinWeightPercent: ${e.slowStartMinWeightPercent}`]
      : []),
  ]
}

/** HAProxy's own check settings, as read from its configuration (or given in a mapping), for a scenario's healthCheck. */
function haproxyLines(s: PoolSettings): string[] {
  const h = s.haproxy
  if (!h) return []
  return [
    `  # ${s.given ? 'given' : 'read'}: ${h.from}`,
    `  fastinter: ${h.fastinter}`,
    `  downinter: ${h.downinter}`,
    `  timeoutServer: ${h.timeoutServer}`,
    ...(h.observe === 'layer7' ? ['  observe: layer7', `  errorLimit: ${h.errorLimit}`, `  onError: ${h.onError}`] : []),
  ]
}

/** The figures as a table a person reads: what each is, its value, its interval, how it was come by, and from what. */
export function figureRows(c: Calibration): string[][] {
  const f = c.figures
  const rows: Array<[string, Estimate | null, string]> = [
    ['servers', f.servers, ''],
    ['capacity per server', f.capacity, 'rps'],
    ['demand, mean', f.demandMean, 'rps'],
    ['demand, peak', f.demandPeak, 'rps'],
    ['service time', f.serviceTime, 's'],
    ['queue per server', f.queue, 's of work'],
    ['errors', f.errorRate, '%'],
    ['check interval', f.interval, 's'],
    ['failed checks to take out', f.fall, ''],
    ['passed checks to return', f.rise, ''],
    ['slow start', f.slowStart, 's'],
    ['drain delay', f.drainDelay, 's'],
    ['route to all below healthy', f.failoverPercent, '%'],
    ['ejection, first', f.baseEjection, 's'],
    ['ejection, longest', f.maxEjection, 's'],
    ['ejected at once, at most', f.maxEjectionPercent, '%'],
    ['client attempts', f.attempts, ''],
    ['client timeout', f.timeout, 's'],
  ]
  return rows
    .filter((r): r is [string, Estimate, string] => r[1] !== null)
    .map(([name, e, unit]) => [
      name,
      `${round(e.value, 2)}${unit ? ` ${unit}` : ''}`,
      interval(e).replace(/^ \(90%: (.*)\)$/, '$1'),
      e.how,
      shortPaths(e.source, c.settings.label),
    ])
}

/**
 * A table cell with each file path the line above the table names in full (the settings' label:
 * `queries and settings from /etc/sluice/mailbox.yaml`) cut to its file name, `mailbox.yaml:4:20`:
 * said once in full, the path need not be split across a narrow column on every row.
 */
function shortPaths(cell: string, label: string): string {
  return cell.replace(/(\/[^\s:]*\/)([^/\s:]+)/g, (path, dir: string, file: string) => (label.includes(path) ? file : path))
}
