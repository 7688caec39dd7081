import {InputError} from '../errors.js'
import {closest} from '../input/closest.js'
import type {Scenario} from '../sim/scenario/schema.js'
import {formatNumber, sweepParam, sweepParams, type SweepParam} from './params.js'

/** One axis of a sweep: a parameter and the values its cells take, low to high. */
export interface Axis {
  param: SweepParam
  from: number
  to: number
  values: number[]
  /** The flag's text, to name it in errors and titles. */
  spec: string
}

/** Points along an axis when the flag gives no STEPS: every whole number up to this many, else this many. */
export const defaultIntegerSteps = 41
export const defaultSteps = 21
/** Points along one axis at the most: past this a map is wider than any terminal and the run slower than it is useful. */
export const maxSteps = 201
/** Servers × ticks of all the runs in one sweep: some minutes of work on two cores. */
export const maxSweepServerTicks = 2e10

const syntax = 'PARAM=FROM..TO[:STEPS]'

/** Parsing as far as the text goes; what the values mean for the scenario is checked in `buildAxis`. */
export function parseSweepFlag(spec: string): {param: SweepParam; from: number; to: number; steps?: number} {
  const bad = (message: string): InputError => new InputError(`--sweep ${spec}: ${message}`)
  const match = /^([A-Za-z-]+)=([^:]+?)\.\.([^:]+)(?::(.*))?$/.exec(spec.trim())
  if (!match) {
    const name = /^([A-Za-z-]+)=/.exec(spec)?.[1]
    if (name && !sweepParam(name)) throw unknownParam(spec, name)
    throw bad(`expected ${syntax}, e.g. broken=0..20 or demand=500..2000:16`)
  }
  const [, name, fromText, toText, stepsText] = match
  const param = sweepParam(name)
  if (!param) throw unknownParam(spec, name)
  const number = (text: string, what: string): number => {
    const value = Number(text)
    if (text.trim() === '' || !Number.isFinite(value)) throw bad(`expected a number for ${what} but received: ${text}`)
    if (param.integer && !Number.isInteger(value))
      throw bad(`${param.name} counts whole ${param.unit}: expected a whole number for ${what} but received: ${text}`)
    return value
  }
  const from = number(fromText, 'FROM')
  const to = number(toText, 'TO')
  if (!(from < to)) throw bad(`expected FROM below TO (a range from low to high), got ${formatNumber(from)}..${formatNumber(to)}`)
  if (stepsText === undefined) return {param, from, to}
  const steps = Number(stepsText)
  if (!Number.isInteger(steps) || steps < 2 || steps > maxSteps)
    throw bad(`expected STEPS to be a whole number from 2 to ${maxSteps} but received: ${stepsText}`)
  if (param.integer && steps > to - from + 1)
    throw bad(`${param.name} counts whole ${param.unit}: at most ${to - from + 1} steps from ${from} to ${to}, got ${steps}`)
  return {param, from, to, steps}
}

function unknownParam(spec: string, name: string): InputError {
  const hint = closest(
    name,
    sweepParams.map((p) => p.name),
  )
  return new InputError(
    `--sweep ${spec}: unknown parameter "${name}"${hint ? `; did you mean ${hint}?` : ''} Parameters: ${sweepParams.map((p) => p.name).join(', ')}`,
  )
}

/** Float noise (0.30000000000000004) would show in labels and --json; twelve digits is exact enough for any scenario number. */
const clean = (x: number): number => Number(x.toPrecision(12))

export function axisValues(from: number, to: number, steps: number, integer: boolean): number[] {
  return Array.from({length: steps}, (_, i) => {
    const v = i === steps - 1 ? to : from + ((to - from) * i) / (steps - 1)
    return integer ? Math.round(v) : clean(v)
  })
}

/** The axis the flag describes, checked against the scenario at both ends (every check is monotone in the value). */
export function buildAxis(spec: string, scenario: Scenario): Axis {
  const {param, from, to, steps} = parseSweepFlag(spec)
  for (const value of [from, to]) {
    const problem = param.check(value, scenario)
    if (problem) throw new InputError(`--sweep ${spec}: ${problem}, got ${formatNumber(value)}`)
  }
  const count = steps ?? (param.integer ? Math.min(defaultIntegerSteps, to - from + 1) : defaultSteps)
  return {param, from, to, values: axisValues(from, to, count, param.integer), spec}
}

/** The axes of `--sweep` given once or twice, checked together. */
export function buildAxes(specs: string[], scenario: Scenario, setups: number): Axis[] {
  if (specs.length > 2) throw new InputError(`--sweep: at most two (an x and a y axis), got ${specs.length}: ${specs.join(', ')}`)
  // A count of broken servers is checked against the largest pool a servers axis gives it.
  const first = specs.map((spec) => parseSweepFlag(spec))
  const servers = first.find((p) => p.param.name === 'servers')
  const widest = servers ? {...scenario, pools: scenario.pools.map((p, i) => (i === 0 ? {...p, servers: servers.to} : p))} : scenario
  const axes = specs.map((spec, i) => buildAxis(spec, first[i] === servers ? scenario : widest))
  if (axes.length === 2 && axes[0].param === axes[1].param)
    throw new InputError(`--sweep ${specs[1]}: ${axes[0].param.name} is already swept by --sweep ${specs[0]}`)
  // HAProxy's checks have no ejection timer: a sweep of one would draw the same map in every cell.
  const ejection = axes.findIndex((a) => a.param.name === 'base-ejection')
  if (ejection >= 0 && scenario.healthCheck.haproxy)
    throw new InputError(
      `--sweep ${specs[ejection]}: scenario ${scenario.name} has HAProxy's health checks, which take a server out after \`fall\` failed checks with no ejection time; sweep check-interval (HAProxy's inter) instead`,
    )
  // "Stuck" means not back although the trigger is gone: a fault still on at the end would read as stuck.
  const lastFix = Math.max(-Infinity, ...scenario.faults.map((f) => f.to))
  if (!axes.some((a) => a.param.name === 'fault-duration') && lastFix >= scenario.duration)
    throw new InputError(
      `--sweep: scenario ${scenario.name} has a fault until ${formatNumber(lastFix)} s, not fixed before the end of the run (${formatNumber(scenario.duration)} s), so no cell could tell stuck from still broken; a longer --duration or an earlier --fix-at`,
    )
  const runs = axes.reduce((n, a) => n * a.values.length, setups)
  const most = widest.pools.reduce((n, p) => n + (p.servers ?? 0), 0)
  const work = runs * most * (scenario.duration / scenario.tick)
  if (work > maxSweepServerTicks)
    throw new InputError(
      `--sweep: ${formatNumber(runs)} runs of up to ${formatNumber(most)} servers × ${formatNumber(scenario.duration / scenario.tick)} ticks is more than ${maxSweepServerTicks.toExponential()} server-ticks; fewer steps or a smaller scenario`,
    )
  return axes
}
