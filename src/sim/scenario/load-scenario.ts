import {join} from 'node:path'
import type {FleetConfig, HealthCheckConfig, Policy} from '../config.js'
import {InputError} from '../../errors.js'
import {packageRoot} from '../../package-root.js'
import {builtinNames, resolveBuiltinOrFile, type Builtins} from '../../input/builtin.js'
import {formatPath, type Path} from '../../input/problems.js'
import {readNamedInput, validate, YamlSource} from '../../input/yaml-source.js'
import {haproxyDefaults, haproxyGuardProblems, policyKeys, policySchema, randomnessOf, scenarioSchema, type Scenario, type SetupPolicy} from './schema.js'

/** The scenarios that ship with sluice, in `scenarios/` at the package root. */
const builtinScenarios: Builtins = {dir: join(packageRoot, 'scenarios'), kind: 'scenario'}

export function builtinScenarioNames(): string[] {
  return builtinNames(builtinScenarios)
}

/** Command-line overrides of a scenario's numbers. They apply to the first pool and the first `broken` fault. */
export interface ScenarioOverrides {
  servers?: number
  capacity?: number
  demand?: number
  broken?: number
  faultAt?: number
  fixAt?: number
  duration?: number
  seed?: number
}

const overrideFlags: Record<string, string> = {
  'pools[0].servers': '--servers',
  'pools[0].capacity': '--capacity',
  'demand.rps': '--demand',
  duration: '--duration',
  seed: '--seed',
}

export interface LoadedScenario {
  scenario: Scenario
  /** Where it came from: a built-in name or a file path. */
  origin: string
}

/**
 * Loads a scenario by built-in name or file path, applies overrides, and validates the result.
 * `where` names what gave the name, for errors: the flag, or a runbook's file:line:column.
 */
export function loadScenario(nameOrFile: string, overrides: ScenarioOverrides = {}, where = '--scenario'): LoadedScenario {
  const file = resolveBuiltinOrFile(nameOrFile, builtinScenarios, where)
  const source = YamlSource.parse(file, readNamedInput(file, where))
  const data = source.data()
  const brokenIndex = applyOverrides(data, overrides)
  const flags = {...overrideFlags}
  if (brokenIndex !== null) {
    if (overrides.broken !== undefined) flags[`faults[${brokenIndex}].servers`] = '--broken'
    if (overrides.faultAt !== undefined) flags[`faults[${brokenIndex}].from`] = '--fault-at'
    if (overrides.fixAt !== undefined) flags[`faults[${brokenIndex}].to`] = overrides.faultAt === undefined ? '--fix-at' : '--fix-at/--fault-at'
  }
  const used = new Set(usedOverridePaths(overrides, brokenIndex))
  const scenario = validate(scenarioSchema, data, source, (path: Path) => {
    const key = formatPath(path)
    return used.has(key) ? flags[key] : undefined
  })
  return {scenario, origin: nameOrFile}
}

function usedOverridePaths(o: ScenarioOverrides, brokenIndex: number | null): string[] {
  const paths: string[] = []
  if (o.servers !== undefined) paths.push('pools[0].servers')
  if (o.capacity !== undefined) paths.push('pools[0].capacity')
  if (o.demand !== undefined) paths.push('demand.rps')
  if (o.duration !== undefined) paths.push('duration')
  if (o.seed !== undefined) paths.push('seed')
  if (brokenIndex !== null) {
    if (o.broken !== undefined) paths.push(`faults[${brokenIndex}].servers`)
    if (o.faultAt !== undefined) paths.push(`faults[${brokenIndex}].from`)
    if (o.fixAt !== undefined) paths.push(`faults[${brokenIndex}].to`)
  }
  return paths
}

type Loose = Record<string, unknown>

/** Writes overrides into the raw data before validation, so one schema checks file and flags alike. Returns the index of the broken fault touched. */
function applyOverrides(data: unknown, o: ScenarioOverrides): number | null {
  if (typeof data !== 'object' || data === null) return null
  const root = data as Loose
  const pool = Array.isArray(root.pools) && typeof root.pools[0] === 'object' ? (root.pools[0] as Loose) : null
  if (pool && o.servers !== undefined) pool.servers = o.servers
  if (pool && o.capacity !== undefined) pool.capacity = o.capacity
  if (o.demand !== undefined) {
    const demand = (typeof root.demand === 'object' && root.demand !== null ? root.demand : {}) as Loose
    delete demand.curve
    demand.rps = o.demand
    root.demand = demand
  }
  if (o.duration !== undefined) root.duration = o.duration
  if (o.seed !== undefined) root.seed = o.seed
  if (o.broken === undefined && o.faultAt === undefined && o.fixAt === undefined) return null
  const faults = Array.isArray(root.faults) ? (root.faults as Loose[]) : []
  root.faults = faults
  let index = faults.findIndex((f) => typeof f === 'object' && f !== null && f.kind === 'broken')
  if (index < 0) {
    faults.push({kind: 'broken'})
    index = faults.length - 1
  }
  const fault = faults[index]
  if (o.broken !== undefined) fault.servers = o.broken
  if (o.faultAt !== undefined) fault.from = o.faultAt
  if (o.fixAt !== undefined) fault.to = o.fixAt
  return index
}

/**
 * A custom setup from the command line: `key=value,key=value`, e.g.
 * `maxEjectionPercent=33,shed=true,slowStart=30`.
 */
export function parsePolicy(text: string): Policy {
  const raw: Record<string, unknown> = {}
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const eq = part.indexOf('=')
    if (eq <= 0) throw new InputError(`--policy: expected key=value pairs separated by commas, got "${part}"`)
    const key = part.slice(0, eq).trim()
    const value = part.slice(eq + 1).trim()
    if (!(policyKeys as string[]).includes(key)) throw new InputError(`--policy: unknown key "${key}"; expected one of ${policyKeys.join(', ')}`)
    raw[key] = value === 'true' ? true : value === 'false' ? false : value !== '' && !Number.isNaN(Number(value)) ? Number(value) : value
  }
  const result = policySchema.safeParse(raw)
  if (!result.success) {
    const issue = result.error.issues[0]
    throw new InputError(`--policy: ${formatPath(issue.path)}: ${issue.message.replace(/^Invalid input: /, '')}`)
  }
  return result.data
}

/**
 * The simulator's input for one of the scenario's setups (or a custom policy). A setup's `clients`
 * are set over the scenario's, key by key.
 */
/** The scenario with --randomness in place of its own; the seed model draws nothing, so asking it to is refused. */
export function withRandomness(scenario: Scenario, randomness: 'drawn' | 'none' | undefined): Scenario {
  if (randomness === undefined) return scenario
  if (randomness === 'drawn' && scenario.model === 'seed')
    throw new InputError(`--randomness: ${scenario.name} runs the seed model, which draws nothing (its table was computed at the mean); leave out --randomness`)
  return {...scenario, randomness}
}

/** A pool's spread of service times: its own, else 1 where the scenario draws (randomnessOf); the seed model draws none. */
export function serviceSpreadOf(scenario: Scenario, pool: Scenario['pools'][number]): number {
  if (scenario.model === 'seed') return 0
  return pool.serviceSpread ?? (randomnessOf(scenario) === 'drawn' ? 1 : 0)
}

export function fleetConfig(scenario: Scenario, setup: Policy | SetupPolicy): FleetConfig {
  const {clients, healthCheck: checkOverride, ...policy} = setup as SetupPolicy
  let healthCheck: HealthCheckConfig = scenario.healthCheck as HealthCheckConfig
  const haproxy = scenario.healthCheck.haproxy
  if (haproxy !== undefined) {
    // The schema refuses these on a scenario's setups; this catches a custom setup from --policy, or one a sweep makes.
    const [problem] = haproxyGuardProblems(policy)
    if (problem) throw new InputError(`--policy/--sweep: ${problem.key}: ${problem.message}`)
    const o = {...haproxy, ...checkOverride}
    const inter = checkOverride?.inter ?? scenario.healthCheck.interval
    healthCheck = {
      interval: inter,
      baseEjection: scenario.healthCheck.baseEjection,
      maxEjection: scenario.healthCheck.maxEjection,
      haproxy: {
        fastinter: o.fastinter ?? inter,
        downinter: o.downinter ?? inter,
        fall: o.fall,
        rise: o.rise,
        observe: o.observe,
        errorLimit: o.errorLimit ?? haproxyDefaults.errorLimit,
        onError: o.onError ?? haproxyDefaults.onError,
        timeoutServer: o.timeoutServer,
      },
    }
    // HAProxy's slowstart is the pool's slow start, which a runbook step may change like Envoy's.
    policy.slowStart = o.slowstart
  }
  const firstPool = scenario.pools[0].name
  const servingPools = scenario.pools.filter((p) => p.kind === 'servers')
  const clientConfig = {...scenario.clients, ...clients}
  const drawn = randomnessOf(scenario) === 'drawn'
  return {
    model: scenario.model,
    duration: scenario.duration,
    tick: scenario.tick,
    seed: scenario.seed,
    pools: scenario.pools.map((p) => ({
      name: p.name,
      kind: p.kind,
      servers: p.servers ?? 0,
      capacity: p.capacity ?? 0,
      capacitySpread: p.capacitySpread,
      serviceSpread: serviceSpreadOf(scenario, p),
      slowMinority: p.slowMinority ?? null,
      balance: p.balance,
      // A queue that empties before the clients give up answers every request it took while its client
      // still waits: none of the overload is wasted work, and what it did not take fails slow.
      collapse: p.queueSeconds !== undefined && p.queueSeconds < clientConfig.timeout ? 0 : p.collapse,
      handshakeCost: p.handshakeCost,
      connectionChurn: p.connectionChurn,
      coldFactor: p.coldFactor,
      warmupSeconds: p.warmupSeconds,
      // Two seconds' worth of requests at capacity: normal traffic never runs out of threads.
      threads: p.threads ?? 2 * (p.capacity ?? 1),
      serviceTime: p.serviceTime,
      restartSeconds: p.restartSeconds,
      queueSeconds: p.queueSeconds ?? null,
    })),
    dns: {
      ttl: scenario.dns.ttl,
      weights: scenario.dns.weights ?? Object.fromEntries(servingPools.map((p) => [p.name, 100])),
    },
    healthCheck,
    clients: clientConfig,
    demand: {
      curve: scenario.demand.curve ?? [[0, scenario.demand.rps ?? 0]],
      types: Object.entries(scenario.demand.types).map(([name, share]) => ({name, share})),
      arrivals: scenario.demand.arrivals ?? (drawn ? 'poisson' : 'mean'),
      sampleScale: scenario.demand.sampleScale,
    },
    faults: scenario.faults.map((f) => ({...f, pool: f.pool ?? firstPool})),
    restrictions: scenario.restrictions.map((r) => ({...r, to: r.to ?? null})),
    policy,
  }
}

/** Picks setups by name; unknown names are an InputError that lists the scenario's setups. */
export function pickSetups(scenario: Scenario, names: string[] | 'all', where = '--setup'): Array<{name: string; policy: SetupPolicy}> {
  const all = Object.entries(scenario.setups).map(([name, policy]) => ({name, policy}))
  if (names === 'all') return all
  return names.map((name) => {
    const found = all.find((s) => s.name === name)
    if (!found) throw new InputError(`${where}: unknown setup "${name}" in scenario ${scenario.name}; its setups are ${all.map((s) => s.name).join(', ')}`)
    return found
  })
}
