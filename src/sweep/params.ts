import type {Policy} from '../sim/config.js'
import {policySchema, scenarioLimits, type Scenario} from '../sim/scenario/schema.js'

/**
 * The scenario parameters a sweep can vary, and how one value lands on a scenario and a setup.
 * Every value is applied to a copy: a cell never sees another cell's scenario, which is what lets
 * cells run in any order, on any thread, and still give the same map.
 */

/** One cell's inputs: the scenario and the setup's policy, after the swept values are applied. */
export interface CellInput {
  scenario: Scenario
  policy: Policy
}

export interface SweepParam {
  name: string
  /** The unit values are said in: axis labels, sentences, --json. */
  unit: string
  integer: boolean
  /** What the parameter is, for --help and the axis title. */
  title: string
  /** The scenario's own value, when it has one: the row a tipping point is stated at. */
  base(scenario: Scenario): number | undefined
  /** Why this value cannot be simulated on this scenario, or undefined. */
  check(value: number, scenario: Scenario): string | undefined
  apply(cell: CellInput, value: number): CellInput
  /** `more than 5 of 20 servers break`: the condition past `value`, for a tipping-point sentence. */
  above(value: number, scenario: Scenario): string
  /** `5 of 20 broken`: one value said with its unit. */
  say(value: number, scenario: Scenario): string
}

/** 1234.5 → `1,234.5`: grouped so that rps read at a glance; at most four significant figures past the integer part. */
export function formatNumber(value: number): string {
  const rounded = Math.abs(value) >= 1000 ? Math.round(value) : Number(value.toPrecision(4))
  const [int, frac] = String(Math.abs(rounded)).split('.')
  const grouped = int.replace(/\B(?=(\d{3})+(?!\d))/g, ',')
  return `${rounded < 0 ? '-' : ''}${grouped}${frac ? `.${frac}` : ''}`
}

function firstBroken(scenario: Scenario): number {
  return scenario.faults.findIndex((f) => f.kind === 'broken')
}

/** The fault `broken` and `fault-duration` change: the first broken one, as --broken and --fix-at do. */
function sweptFault(scenario: Scenario): number {
  const broken = firstBroken(scenario)
  return broken >= 0 ? broken : scenario.faults.length > 0 ? 0 : -1
}

function withFault(cell: CellInput, index: number, change: Record<string, number>): CellInput {
  const faults = cell.scenario.faults.map((f, i) => (i === index ? {...f, ...change} : f))
  return {...cell, scenario: {...cell.scenario, faults}}
}

function withFirstPool(cell: CellInput, change: {servers?: number; capacity?: number}): CellInput {
  const pools = cell.scenario.pools.map((p, i) => (i === 0 ? {...p, ...change} : p))
  return {...cell, scenario: {...cell.scenario, pools}}
}

const poolServers = (s: Scenario): number => s.pools[0].servers ?? 0
const ticks = (s: Scenario): number => s.duration / s.tick
const unitSuffix = (unit: string): string => (unit === '%' ? '%' : unit ? ` ${unit}` : '')

function span(value: number): string | undefined {
  if (!(value > 0)) return 'expected a time above 0 s'
  if (value > scenarioLimits.maxSeconds) return `expected at most ${scenarioLimits.maxSeconds} s`
  return undefined
}

const firstRestriction = (s: Scenario) => s.restrictions[0] as Scenario['restrictions'][number] | undefined

const scenarioParams: SweepParam[] = [
  {
    name: 'broken',
    unit: 'servers',
    integer: true,
    title: 'broken servers',
    base: (s) => {
      const i = firstBroken(s)
      return i < 0 ? undefined : (s.faults[i] as {servers: number}).servers
    },
    check: (v, s) => {
      if (firstBroken(s) < 0) return `scenario ${s.name} has no broken fault to sweep`
      if (v < 0) return 'expected at least 0 servers'
      if (v > poolServers(s)) return `expected at most the pool's ${formatNumber(poolServers(s))} servers`
      return undefined
    },
    // Zero broken is a fault window in which nothing breaks: the row every other row is compared with.
    apply: (cell, v) => withFault(cell, firstBroken(cell.scenario), {servers: v}),
    above: (v, s) => `more than ${formatNumber(v)} of ${formatNumber(poolServers(s))} servers break`,
    say: (v, s) => `${formatNumber(v)} of ${formatNumber(poolServers(s))} broken`,
  },
  {
    name: 'demand',
    unit: 'rps',
    integer: false,
    title: 'demand',
    base: (s) => s.demand.rps,
    check: (v) =>
      v < 0
        ? 'expected a demand of at least 0 rps'
        : v > scenarioLimits.maxRps
          ? `expected a demand of at most ${formatNumber(scenarioLimits.maxRps)} rps`
          : undefined,
    // A constant demand replaces the scenario's curve, as --demand does.
    apply: (cell, v) => ({...cell, scenario: {...cell.scenario, demand: {...cell.scenario.demand, rps: v, curve: undefined}}}),
    above: (v) => `demand is above ${formatNumber(v)} rps`,
    say: (v) => `${formatNumber(v)} rps`,
  },
  {
    name: 'servers',
    unit: 'servers',
    integer: true,
    title: 'servers in the pool',
    base: (s) => s.pools[0].servers,
    check: (v, s) => {
      if (s.pools[0].kind !== 'servers') return `the first pool of ${s.name} is a sorry pool`
      if (v < 1) return 'expected at least 1 server'
      if (v > scenarioLimits.maxServers) return `expected at most ${scenarioLimits.maxServers} servers`
      if (v * ticks(s) > scenarioLimits.maxServerTicks) return `expected at most ${scenarioLimits.maxServerTicks.toExponential()} servers × ticks per run`
      return undefined
    },
    apply: (cell, v) => withFirstPool(cell, {servers: v}),
    above: (v) => `the pool has more than ${formatNumber(v)} servers`,
    say: (v) => `${formatNumber(v)} servers`,
  },
  {
    name: 'capacity',
    unit: 'rps',
    integer: false,
    title: 'capacity per server',
    base: (s) => s.pools[0].capacity,
    check: (v, s) => {
      if (s.pools[0].kind !== 'servers') return `the first pool of ${s.name} is a sorry pool`
      if (!(v > 0)) return 'expected a capacity above 0 rps'
      return v > scenarioLimits.maxRps ? `expected a capacity of at most ${formatNumber(scenarioLimits.maxRps)} rps` : undefined
    },
    apply: (cell, v) => withFirstPool(cell, {capacity: v}),
    above: (v) => `each server completes more than ${formatNumber(v)} rps`,
    say: (v) => `${formatNumber(v)} rps per server`,
  },
  {
    name: 'fault-duration',
    unit: 's',
    integer: false,
    title: 'fault duration',
    base: (s) => {
      const i = sweptFault(s)
      return i < 0 ? undefined : s.faults[i].to - s.faults[i].from
    },
    check: (v, s) => {
      const i = sweptFault(s)
      if (i < 0) return `scenario ${s.name} has no fault to sweep`
      if (!(v > 0)) return 'expected a fault that lasts above 0 s'
      // A cell can only be stuck "although the trigger is gone" if the trigger goes within the run.
      const fix = s.faults[i].from + v
      if (fix >= s.duration) return `the fix would come at ${formatNumber(fix)} s, not before the end of the run (${s.duration} s)`
      return undefined
    },
    apply: (cell, v) => {
      const i = sweptFault(cell.scenario)
      return withFault(cell, i, {to: cell.scenario.faults[i].from + v})
    },
    above: (v) => `the fault lasts longer than ${formatNumber(v)} s`,
    say: (v) => `a ${formatNumber(v)} s fault`,
  },
  {
    name: 'check-interval',
    unit: 's',
    integer: false,
    title: 'health-check interval',
    base: (s) => s.healthCheck.interval,
    check: (v, s) => span(v) ?? (v < s.tick ? `expected at least one tick (${s.tick} s)` : undefined),
    apply: (cell, v) => ({...cell, scenario: {...cell.scenario, healthCheck: {...cell.scenario.healthCheck, interval: v}}}),
    above: (v) => `health checks are more than ${formatNumber(v)} s apart`,
    say: (v) => `checks every ${formatNumber(v)} s`,
  },
  {
    name: 'base-ejection',
    unit: 's',
    integer: false,
    title: 'base ejection time',
    base: (s) => s.healthCheck.baseEjection,
    check: (v) => span(v),
    apply: (cell, v) => ({...cell, scenario: {...cell.scenario, healthCheck: {...cell.scenario.healthCheck, baseEjection: v}}}),
    above: (v) => `ejections start longer than ${formatNumber(v)} s`,
    say: (v) => `${formatNumber(v)} s base ejection`,
  },
  {
    name: 'restricted',
    unit: '%',
    integer: true,
    title: 'share of the restricted type turned away',
    base: (s) => firstRestriction(s)?.share,
    check: (v, s) => {
      if (!firstRestriction(s)) return `${s.name} declares no restriction to vary: give it one (restrictions: [{type: NAME}])`
      if (v < 0 || v > 100) return 'expected a share from 0 to 100%'
      return undefined
    },
    apply: (cell, v) => ({
      ...cell,
      scenario: {...cell.scenario, restrictions: cell.scenario.restrictions.map((r, i) => (i === 0 ? {...r, share: v} : r))},
    }),
    above: (v, s) => `more than ${formatNumber(v)}% of ${firstRestriction(s)!.type} is turned away`,
    say: (v, s) => `${formatNumber(v)}% of ${firstRestriction(s)!.type} turned away`,
  },
]

const policyUnits: Record<string, string> = {maxEjectionPercent: '%', panicThreshold: '%', slowStart: 's', slowStartMinWeightPercent: '%'}
const policyTitles: Record<string, string> = {
  maxEjectionPercent: 'ejection cap',
  panicThreshold: 'panic threshold',
  slowStart: 'slow start',
  slowStartMinWeightPercent: 'slow-start initial weight',
}

/**
 * The setups' numeric keys, read from the policy schema itself so that a key added there can be
 * swept without a change here. A swept key overrides every setup's own value for that key.
 */
function policyParams(): SweepParam[] {
  const defaults = policySchema.parse({}) as Record<string, unknown>
  const shape = policySchema.shape as Record<string, {safeParse(v: unknown): {success: boolean; error?: {issues: Array<{message: string}>}}}>
  return Object.keys(defaults)
    .filter((key) => typeof defaults[key] === 'number')
    .map((key) => {
      const unit = policyUnits[key] ?? ''
      return {
        name: key,
        unit,
        integer: false,
        title: policyTitles[key] ?? key,
        base: () => undefined,
        check: (v: number) => {
          const result = shape[key].safeParse(v)
          return result.success ? undefined : (result.error?.issues[0].message ?? 'out of range').replace(/^Invalid input: /, '')
        },
        apply: (cell: CellInput, v: number) => ({...cell, policy: {...cell.policy, [key]: v}}),
        above: (v: number) => `${key} is above ${formatNumber(v)}${unitSuffix(unit)}`,
        say: (v: number) => `${key} ${formatNumber(v)}${unitSuffix(unit)}`,
      }
    })
}

export const sweepParams: SweepParam[] = [...scenarioParams, ...policyParams()]

export function sweepParam(name: string): SweepParam | undefined {
  return sweepParams.find((p) => p.name === name)
}

/** Requests per second the serving pools complete with every server healthy and warm. */
export function healthyCapacity(scenario: Scenario): number {
  return scenario.pools.reduce((sum, p) => sum + (p.kind === 'servers' ? (p.servers ?? 0) * (p.capacity ?? 0) : 0), 0)
}

/** `demand (rps)`, `ejection cap (%)`, `broken servers (of 20)`: an axis title in the parameter's own unit. */
export function axisTitle(param: SweepParam, scenario: Scenario, other?: SweepParam): string {
  if (param.name === 'broken' && other?.name !== 'servers') return `broken servers (of ${formatNumber(poolServers(scenario))})`
  return param.unit && !param.title.endsWith(param.unit) ? `${param.title} (${param.unit})` : param.title
}
