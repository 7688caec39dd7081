import {z} from 'zod'
import type {Path, Problem} from '../input/problems.js'
import {schemaProblems} from '../input/schema-problems.js'
import {readNamedInput, YamlSource} from '../input/yaml-source.js'

/** What one pool's readings are in Prometheus: a PromQL query each, `$window` filled in with the period. */
const query = z.string().trim().min(1, 'expected a PromQL query').describe('PromQL; `$window` becomes the period as a duration (`60s`).')

const span = z.number().positive().max(86_400, 'expected at most 86400 s (a day)')
const seconds = z.number().nonnegative().max(86_400, 'expected at most 86400 s (a day)')
const percent = z.number().min(0).max(100)
const count = z.number().int().min(1).max(1000)

/**
 * Envoy's outlier detection and its cluster's guards, as the simulator's Envoy model has them: a
 * server failing at a pass (every `interval`) is ejected for baseEjection × the times it was
 * ejected, up to maxEjection, with at most maxEjectionPercent of the pool out at once.
 */
const envoyChecks = z.strictObject({
  interval: span.describe('outlier_detection.interval, seconds'),
  baseEjection: span.describe('outlier_detection.base_ejection_time, seconds'),
  maxEjection: span.describe('outlier_detection.max_ejection_time, seconds'),
  maxEjectionPercent: percent.describe('outlier_detection.max_ejection_percent'),
  panicThreshold: percent.describe('common_lb_config.healthy_panic_threshold (0: off)'),
  slowStart: seconds.describe('slow_start_config.slow_start_window, seconds (0: off)'),
  slowStartMinWeightPercent: z.number().gt(0).max(100).optional().describe('slow_start_config.min_weight_percent (default 10)'),
})

/** An ALB target group's health check and attributes, in seconds and percent. */
const albChecks = z.strictObject({
  interval: span.describe('HealthCheckIntervalSeconds'),
  timeout: span.optional().describe('HealthCheckTimeoutSeconds'),
  fall: count.describe('UnhealthyThresholdCount'),
  rise: count.describe('HealthyThresholdCount'),
  slowStart: seconds.describe('slow_start.duration_seconds (0: off)'),
  drainDelay: seconds.optional().describe('deregistration_delay.timeout_seconds'),
  failoverPercent: z
    .number({error: 'expected a percent, or null for off'})
    .min(0)
    .max(100)
    .nullable()
    .describe('minimum healthy targets routing percentage (null: off)'),
})

/** A HAProxy backend's server check settings, named as in haproxy.cfg and in a scenario's healthCheck (seconds). */
const haproxyChecks = z.strictObject({
  inter: span,
  timeout: span.optional().describe('timeout check'),
  fall: count,
  rise: count,
  slowstart: seconds,
  timeoutServer: span.describe('timeout server'),
  fastinter: span.optional(),
  downinter: span.optional(),
  observe: z.enum(['none', 'layer7']).optional(),
  errorLimit: z.number().int().min(1).max(1_000_000).optional(),
  onError: z.enum(['fastinter', 'fail-check', 'sudden-death', 'mark-down']).optional(),
})

const common = {
  pool: z
    .string()
    .regex(/^[a-z0-9][a-z0-9-]*$/, 'expected a lower-case name of letters, digits and dashes')
    .describe("The pool's name in the scenario."),
  queries: z.strictObject({
    requests: query.describe('Requests a second that reached the pool (a rate).'),
    errors: query.describe('Of them, errors a second (a rate): the servers’ 5xx and the load balancer’s own.'),
    healthy: query.describe('Servers in rotation (a gauge).'),
    servers: z.union([query, z.number().int().min(1).max(100_000)]).describe('Servers in the pool: a query (a gauge) or a number.'),
    latency: query.optional().describe('Mean seconds to an answer.'),
  }),
  authorizationEnv: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected the name of an environment variable')
    .optional()
    .describe('The environment variable that holds the Authorization header (`Bearer TOKEN`); its value is sent, never written anywhere.'),
}

export const poolMappingSchema = z.discriminatedUnion('family', [
  z.strictObject({family: z.literal('envoy'), checks: envoyChecks, ...common}),
  z.strictObject({family: z.literal('haproxy'), checks: haproxyChecks, ...common}),
  z.strictObject({family: z.literal('alb'), checks: albChecks, ...common}),
])

export type PoolMappingData = z.output<typeof poolMappingSchema>
export type MappedQuery = keyof PoolMappingData['queries']

/** A mapping file, checked, with where each of its values is (file:line:column) for what follows. */
export interface PoolMapping {
  file: string
  data: PoolMappingData
  /** `file:line:column` of the value at `path`. */
  locate(path: Path): string
}

/** The one placeholder a query may hold; PromQL itself has no `$`. */
const placeholder = /\$([A-Za-z_]\w*)?/g

/**
 * Reads and checks the mapping that says where a pool's readings are in Prometheus. Every problem
 * is reported at once, each at its file:line:column with what was expected, as a runbook's are.
 */
export function loadPoolMapping(file: string, where = '--mapping'): PoolMapping {
  return parsePoolMapping(file, readNamedInput(file, where))
}

export function parsePoolMapping(file: string, text: string): PoolMapping {
  const source = YamlSource.parse(file, text)
  const data = source.data()
  if (data === null || typeof data !== 'object' || Array.isArray(data))
    throw source.error([{path: [], message: 'expected a mapping of pool, family, checks and queries'}])
  if (!('family' in data))
    throw source.error([
      {path: [], message: 'missing family: expected one of envoy, haproxy, alb (what fronts the pool: its checks, and the levers assess offers)'},
    ])
  const checked = schemaProblems(poolMappingSchema, data)
  const family = (data as {family?: unknown}).family
  const checksOf = {envoy: envoyChecks, haproxy: haproxyChecks, alb: albChecks}[typeof family === 'string' ? family : ''] as z.ZodObject | undefined
  // Each family names its checks as its load balancer does (HAProxy's slowstart, Envoy's slowStart):
  // a key that is one of this family's but for its case is that one, else say which names it takes.
  const names = checksOf ? Object.keys(checksOf.shape) : []
  const given = (data as {checks?: unknown}).checks
  const spelt = new Set<string>()
  const problems: Problem[] = (checked.success ? [] : checked.problems).map((p) => {
    if (!checksOf || p.key === undefined || p.path.length !== 1 || p.path[0] !== 'checks' || p.message.includes('did you mean')) return p
    const meant = names.find((n) => n.toLowerCase() === p.key!.toLowerCase())
    if (meant !== undefined) spelt.add(meant)
    return {...p, message: `${p.message}${meant === undefined ? `; ${String(family)} checks are ${names.join(', ')}` : ` (did you mean '${meant}'?)`}`}
  })
  // The one misspelt is also missing: the suggestion says so once.
  const missing = (p: Problem) =>
    p.key === undefined &&
    p.path.length === 2 &&
    p.path[0] === 'checks' &&
    spelt.has(String(p.path[1])) &&
    (given as Record<string, unknown>)[String(p.path[1])] === undefined
  problems.splice(0, problems.length, ...problems.filter((p) => !missing(p)))
  const queries = (data as {queries?: Record<string, unknown>}).queries
  for (const [key, value] of Object.entries(queries && typeof queries === 'object' ? queries : {})) {
    if (typeof value !== 'string') continue
    const unknown = [...value.matchAll(placeholder)].map((m) => m[0]).filter((p) => p !== '$window')
    if (unknown.length > 0)
      problems.push({path: ['queries', key], message: `unknown placeholder ${unknown[0]}; expected PromQL with at most $window (the period, as 60s) filled in`})
  }
  if (problems.length > 0 || !checked.success) throw source.error(problems)
  return {file, data: checked.data, locate: (path) => source.locate(path)}
}
