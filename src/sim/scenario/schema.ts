import {z} from 'zod'
import {fullResolutionPoints} from '../record.js'

/**
 * The bounds on a scenario's numbers, in one place: past them a simulation stops being a model of
 * an incident and becomes a way to hang sluice or run it out of memory.
 */
export const scenarioLimits = {
  /** Seconds per tick, at the least: finer resolves nothing a health check or a client sees, at 100× the work of 1 s. */
  minTick: 0.01,
  /** Seconds per tick, at the most: coarser than a minute blurs every health check and DNS TTL into one step. */
  maxTick: 60,
  /**
   * Any time on a scenario's timeline, its duration included: 1,000 hours. The record keeps a
   * bounded number of points and the summary is taken as the run goes, so memory no longer grows
   * with the duration; past this a run is minutes of work that models no incident anyone lives through.
   */
  maxSeconds: 3_600_000,
  /** A span within the model (a timeout, an ejection, a TTL, a warm-up): a day, as a runbook's durations. */
  maxSpan: 86_400,
  /** Servers in one pool: more than any one load balancer fronts. */
  maxServers: 100_000,
  /** Servers × ticks the simulator steps through: some 15 s of work at its ~70 M a second. */
  maxServerTicks: 1e9,
  /**
   * Requests a second, in demand or a server's capacity: a billion, more than any service takes;
   * far past it the model's sums lose every digit that matters, and near the largest doubles they overflow.
   */
  maxRps: 1e9,
  /** Numbers the simulator holds at once (8 bytes each; 64 Mi is 512 MiB), so a run stays well inside Node's heap. */
  maxCells: 64 * 1024 * 1024,
}

/** A second on the scenario's timeline. */
const time = z.number().nonnegative().max(scenarioLimits.maxSeconds, `expected at most ${scenarioLimits.maxSeconds} s (1,000 h)`)
/** Seconds of something within the model, zero allowed. */
const seconds = z.number().nonnegative().max(scenarioLimits.maxSpan)
const positive = z.number().positive()
/** A time span above zero, at most a day. */
const span = positive.max(scenarioLimits.maxSpan)

export const policySchema = z.strictObject({
  maxEjectionPercent: z.number().min(0).max(100).default(100),
  panicThreshold: z.number().min(0).max(100).default(0),
  shed: z.boolean().default(false),
  slowStart: seconds.default(0),
  slowStartMinWeightPercent: z.number().gt(0).max(100).default(10),
})

export const policyKeys = Object.keys(policySchema.shape) as Array<keyof z.infer<typeof policySchema>>

/** How clients retry: the scenario's `clients`, and what a setup may set over it. */
const clientFields = {
  attempts: z.number().int().min(1).max(10),
  timeout: span,
  backoffBase: seconds,
  backoffMax: seconds,
  retryBudget: z.number().min(0).max(1).nullable(),
  budgetWindow: span,
  honourRetryAfter: z.boolean(),
  retryAfter: seconds,
  thinkTime: span,
}
const clientDefaults = {
  attempts: 1,
  timeout: 5,
  backoffBase: 0.1,
  backoffMax: 20,
  retryBudget: null,
  budgetWindow: 10,
  honourRetryAfter: true,
  retryAfter: 5,
  thinkTime: 1,
}

/**
 * HAProxy's server check settings, named as in its configuration (`inter`, `fall`, `rise`,
 * `observe`, `error-limit`, `on-error`, `slowstart`, and the backend's `timeout server` as
 * `timeoutServer`), in seconds. `fastinter` and `downinter`
 * default to `inter`, and `errorLimit` and `onError` to HAProxy's 10 and fastinter, when the
 * simulator's config is built (src/sim/scenario/load-scenario.ts), so a setup that changes `inter` moves them too.
 */
const haproxyFields = {
  inter: span,
  fastinter: span,
  downinter: span,
  fall: z.number().int().min(1).max(1000),
  rise: z.number().int().min(1).max(1000),
  observe: z.enum(['none', 'layer7']),
  errorLimit: z.number().int().min(1).max(1_000_000),
  onError: z.enum(['fastinter', 'fail-check', 'sudden-death', 'mark-down']),
  slowstart: seconds,
  /**
   * How long HAProxy waits for a server's answer. Without `option abortonclose` (HAProxy's default)
   * a client that gives up does not end its session, so a session to a server that does not answer
   * stays open this long, and a drain waits for it. Default: 50 s, HAProxy's example configuration.
   */
  timeoutServer: span,
}
export const haproxyDefaults = {inter: 2, fall: 3, rise: 2, observe: 'none', errorLimit: 10, onError: 'fastinter', slowstart: 0, timeoutServer: 50} as const

const envoyCheckDefaults = {interval: 10, baseEjection: 30, maxEjection: 300}

/**
 * A scenario's health checks: Envoy-style outlier ejection (the default, `kind` may be left out)
 * or HAProxy's rules (`kind: haproxy`). Both come out with `interval`, the HAProxy ones with their
 * settings under `haproxy`, so code that reads or sweeps the interval works on either.
 */
const healthCheckSchema = z.preprocess(
  (v) => (typeof v === 'object' && v !== null && !Array.isArray(v) && !('kind' in v) ? {kind: 'envoy', ...v} : v),
  z
    .discriminatedUnion('kind', [
      z.strictObject({
        kind: z.literal('envoy'),
        interval: span.default(envoyCheckDefaults.interval),
        baseEjection: span.default(envoyCheckDefaults.baseEjection),
        maxEjection: span.default(envoyCheckDefaults.maxEjection),
      }),
      z.strictObject({
        kind: z.literal('haproxy'),
        inter: haproxyFields.inter.default(haproxyDefaults.inter),
        fastinter: haproxyFields.fastinter.optional(),
        downinter: haproxyFields.downinter.optional(),
        fall: haproxyFields.fall.default(haproxyDefaults.fall),
        rise: haproxyFields.rise.default(haproxyDefaults.rise),
        observe: haproxyFields.observe.default(haproxyDefaults.observe),
        errorLimit: haproxyFields.errorLimit.optional(),
        onError: haproxyFields.onError.optional(),
        slowstart: haproxyFields.slowstart.default(haproxyDefaults.slowstart),
        timeoutServer: haproxyFields.timeoutServer.default(haproxyDefaults.timeoutServer),
      }),
    ])
    .transform((check): {interval: number; baseEjection: number; maxEjection: number; haproxy?: HaproxySettings} => {
      if (check.kind === 'envoy') return {interval: check.interval, baseEjection: check.baseEjection, maxEjection: check.maxEjection}
      const {kind: _kind, inter, ...haproxy} = check
      // Ejection times mean nothing to HAProxy; they keep their defaults so the shape stays one.
      return {interval: inter, baseEjection: envoyCheckDefaults.baseEjection, maxEjection: envoyCheckDefaults.maxEjection, haproxy}
    }),
)

/** A scenario's HAProxy settings as declared: `inter` is the health check's `interval`; unset options take HAProxy's defaults later. */
export interface HaproxySettings {
  fastinter?: number
  downinter?: number
  fall: number
  rise: number
  observe: 'none' | 'layer7'
  errorLimit?: number
  onError?: 'fastinter' | 'fail-check' | 'sudden-death' | 'mark-down'
  slowstart: number
  timeoutServer: number
}

/**
 * A setup: load-balancer guards, and optionally the clients' retry policy over the scenario's
 * (`clients: {retryBudget: 0.1}`), so one scenario can compare clients as well as load balancers,
 * and HAProxy check settings over the scenario's (`healthCheck: {observe: layer7}`) when its
 * checks are HAProxy's.
 */
export const setupSchema = policySchema.extend({
  clients: z.strictObject(clientFields).partial().optional(),
  healthCheck: z.strictObject(haproxyFields).partial().optional(),
})

/**
 * The guards of a setup that HAProxy has no counterpart for, with why: refused rather than
 * ignored, so a setup never claims a protection its load balancer does not give. A guard at its
 * do-nothing value (no cap, no panic, no slow start) is not refused.
 */
export function haproxyGuardProblems(policy: {
  maxEjectionPercent: number
  panicThreshold: number
  slowStart: number
  slowStartMinWeightPercent: number
}): Array<{key: string; message: string}> {
  const problems: Array<{key: string; message: string}> = []
  if (policy.maxEjectionPercent < 100)
    problems.push({
      key: 'maxEjectionPercent',
      message:
        "maxEjectionPercent is Envoy's cap on ejections; HAProxy has none (every server that fails `fall` checks goes DOWN), so it means nothing with healthCheck kind haproxy: remove it",
    })
  if (policy.panicThreshold > 0)
    problems.push({
      key: 'panicThreshold',
      message:
        "panicThreshold is Envoy's panic routing; HAProxy has none (with every server DOWN it answers 503), so it means nothing with healthCheck kind haproxy: remove it",
    })
  if (policy.slowStart > 0)
    problems.push({
      key: 'slowStart',
      message:
        "with healthCheck kind haproxy, slow start is HAProxy's server setting: set healthCheck.slowstart (in the scenario or in this setup's healthCheck) instead of slowStart",
    })
  if (policy.slowStartMinWeightPercent !== 10)
    problems.push({
      key: 'slowStartMinWeightPercent',
      message:
        "slowStartMinWeightPercent is Envoy's; HAProxy's slowstart begins at 1/16 of the weight, so it means nothing with healthCheck kind haproxy: remove it",
    })
  return problems
}

export const poolSchema = z
  .strictObject({
    name: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'expected a lower-case name of letters, digits and dashes'),
    kind: z.enum(['servers', 'sorry']).default('servers'),
    servers: z.number().int().min(1).max(scenarioLimits.maxServers).optional(),
    capacity: positive.max(scenarioLimits.maxRps, 'expected at most 1000000000 rps (a billion a second)').optional(),
    capacitySpread: z.number().min(0).lt(1).default(0),
    /** A share of the servers (a seeded draw) that complete only `factor` of the capacity: an older instance type, a noisy neighbour. */
    slowMinority: z.strictObject({share: z.number().gt(0).lt(1), factor: z.number().gt(0).lt(1)}).optional(),
    /**
     * How the load balancer picks a server for each request: round-robin (an equal share each,
     * HAProxy's and Envoy's default), random (each request on its own, so shares wobble from tick
     * to tick, a seeded draw), least-connections (a faster server finishes sooner and gets more,
     * in proportion to its capacity).
     */
    balance: z.enum(['round-robin', 'random', 'least-connections']).default('round-robin'),
    /** Work wasted per unit of overload, in the seed model only: the queueing model's servers carry their queue instead. */
    collapse: z.number().nonnegative().default(1),
    handshakeCost: z.number().min(1).default(1),
    connectionChurn: z.number().min(0).max(1).default(0),
    coldFactor: z.number().gt(0).max(1).default(1),
    warmupSeconds: seconds.default(0),
    threads: positive.optional(),
    serviceTime: span.default(0.1),
    /**
     * How much one request's service time varies, as a coefficient of variation: 1 (the default
     * under `randomness: drawn`, else 0) is exponential, as M/M/c assumes; 0, every request takes
     * exactly serviceTime. A server near capacity completes a drawn count of requests each tick.
     */
    serviceSpread: z.number().min(0).max(4).optional(),
    /**
     * Seconds of work a server queues before it stops reading new requests (they wait unanswered
     * until their clients give up). Unset, the queue is unbounded: an overloaded server answers
     * everything late, and answers to clients that have gone are the wasted work of `collapse`.
     */
    queueSeconds: span.optional(),
    /** Seconds a restarted server is down before it comes back (cold). */
    restartSeconds: span.default(30),
  })
  .superRefine((pool, ctx) => {
    if (pool.kind === 'sorry') return
    if (pool.servers === undefined) ctx.addIssue({code: 'custom', path: ['servers'], message: 'a pool of kind servers needs a server count'})
    if (pool.capacity === undefined) ctx.addIssue({code: 'custom', path: ['capacity'], message: 'a pool of kind servers needs a capacity (rps per server)'})
  })

const faultSchema = z.discriminatedUnion('kind', [
  z.strictObject({
    kind: z.literal('broken'),
    pool: z.string().optional(),
    servers: z.number().int().min(1),
    from: time,
    to: time,
    mode: z.enum(['hang', 'refuse']).default('hang'),
  }),
  /**
   * A dependency that holds threads: from `from` to `to`, each request of `type` keeps a thread for
   * exactly holdSeconds, then fails. What a server whose threads are all held does is `release`:
   * `restart` (the default), it stalls and answers nothing, its health checks included, until it
   * is restarted; `at-timeout`, it serves nothing until held calls time out and hand their threads
   * back, then serves again. The simulator (model: queueing) and the drill's fleet follow these
   * rules alike; the seed model releases held threads at random.
   */
  z.strictObject({
    kind: z.literal('thread-hold'),
    pool: z.string().optional(),
    type: z.string(),
    holdSeconds: span,
    release: z.enum(['restart', 'at-timeout']).default('restart'),
    from: time,
    to: time,
  }),
  /**
   * A bad build or a failing dependency that answers a share of a pool's requests with an error:
   * from `from` to `to`, each request its servers serve is answered 500 with chance `percent` /
   * 100, after its full service time (the work was done; only the answer is an error). The servers
   * stay up and pass their checks, as a pool with a small regression does.
   */
  z.strictObject({
    kind: z.literal('errors'),
    pool: z.string().optional(),
    percent: z.number().gt(0).max(100),
    from: time,
    to: time,
  }),
  z.strictObject({
    kind: z.literal('metadata-outage'),
    pool: z.string().optional(),
    from: time,
    to: time,
    lookupCapacity: positive.nullable().default(null),
  }),
])

const rate = z.number().nonnegative().max(scenarioLimits.maxRps, 'expected at most 1000000000 rps (a billion a second)')
const curvePoint = z.tuple([time, rate])

/**
 * Seconds per tick when a scenario gives none: 1, or for HAProxy's checks a twentieth of the
 * shortest check interval the scenario or a setup declares, and a hundredth where the scenario
 * or a setup observes live traffic (layer7), which acts within errorLimit requests: a tenth of
 * a second at the shipped scenarios' rates. At 1 s HAProxy's usual `inter 2s` has two phases, so
 * every server is checked in one of two instants, and a pool on its tipping point lands on
 * either side by the tick alone; the shipped HAProxy scenarios' figures stop moving at these
 * ticks (docs/model.md, "Where the model hangs on its tick"). Envoy's scenarios keep
 * 1 s: two of them (outlook-recovery, relapse) still move with a finer tick, which docs/model.md
 * reports. The seed model's table was computed at 1 s and is kept as it was.
 */
function defaultTick(scenario: {
  model: 'queueing' | 'seed'
  healthCheck: {interval: number; haproxy?: HaproxySettings}
  setups: Record<string, {healthCheck?: {inter?: number; fastinter?: number; downinter?: number; observe?: 'none' | 'layer7'}}>
}): number {
  const haproxy = scenario.healthCheck.haproxy
  if (scenario.model === 'seed' || haproxy === undefined) return 1
  const setups = Object.values(scenario.setups)
  const spans = [scenario.healthCheck.interval, haproxy.fastinter, haproxy.downinter]
  for (const setup of setups) spans.push(setup.healthCheck?.inter, setup.healthCheck?.fastinter, setup.healthCheck?.downinter)
  const shortest = Math.min(...spans.filter((v): v is number => v !== undefined))
  const observed = haproxy.observe === 'layer7' || setups.some((setup) => setup.healthCheck?.observe === 'layer7')
  return Math.max(scenarioLimits.minTick, Math.min(1, shortest / (observed ? 100 : 20)))
}

export const scenarioSchema = z
  .strictObject({
    name: z.string().min(1),
    description: z.string().default(''),
    duration: positive.max(scenarioLimits.maxSeconds, `expected at most ${scenarioLimits.maxSeconds} s (1,000 h)`).default(600),
    tick: z.number().min(scenarioLimits.minTick).max(scenarioLimits.maxTick).optional(),
    seed: z.number().int().nonnegative().default(1),
    frontedBy: z
      .enum(['alb', 'envoy', 'haproxy'])
      .optional()
      .describe(
        "What fronts the pool in production, as calibrate read it: assess offers that load balancer's levers (an ALB has routing failover and no ejection cap). Without it, Envoy's unless healthCheck is kind: haproxy.",
      ),
    model: z
      .enum(['queueing', 'seed'])
      .default('queueing')
      .describe(
        "The simulator's rules: queueing (what the drills check against real software) or seed (the rules the seed's table was computed with: every fast 503 makes clients wait retryAfter; held threads are released at random).",
      ),
    randomness: z
      .enum(['drawn', 'none'])
      .optional()
      .describe(
        "drawn: requests arrive as a Poisson process and service times vary (demand.arrivals poisson, each pool's serviceSpread 1), seeded, so a verdict is one seed's and is given over several (simulate --seeds); none (the default for now, and the seed model's only one): arrivals at the mean and every service time exact, the deterministic model. An explicit demand.arrivals or serviceSpread wins over either.",
      ),
    pools: z.array(poolSchema).min(1),
    demand: z
      .strictObject({
        rps: rate.optional(),
        curve: z.array(curvePoint).min(1).optional(),
        types: z.record(z.string(), z.number().min(0).max(1)).default({all: 1}),
        /**
         * `poisson`: each tick's requests a seeded draw around the rate, as independent users arrive
         * (the default under `randomness: drawn`); `mean`: the rate exactly, every tick.
         */
        arrivals: z.enum(['mean', 'poisson']).optional(),
        /**
         * The share of the scenario's requests the Poisson draws are made at: a drill at rate scale r
         * and time scale s sends r × s of them, and a smaller count bursts by more (1 / √(r s)).
         */
        sampleScale: z.number().gt(0).max(1).default(1),
      })
      .superRefine((demand, ctx) => {
        if ((demand.rps === undefined) === (demand.curve === undefined))
          ctx.addIssue({code: 'custom', path: [], message: 'expected exactly one of rps (constant) or curve ([[seconds, rps], ...])'})
        demand.curve?.forEach((point, i) => {
          if (i > 0 && point[0] <= demand.curve![i - 1][0])
            ctx.addIssue({
              code: 'custom',
              path: ['curve', i, 0],
              message: `expected times in ascending order, got ${point[0]} after ${demand.curve![i - 1][0]}`,
            })
        })
        const total = Object.values(demand.types).reduce((a, b) => a + b, 0)
        if (Math.abs(total - 1) > 1e-6)
          ctx.addIssue({code: 'custom', path: ['types'], message: `expected traffic type shares that add up to 1, got ${Number(total.toFixed(6))}`})
      }),
    dns: z
      .strictObject({
        ttl: seconds.default(60),
        weights: z.record(z.string(), z.number().int().min(0).max(255)).optional(),
      })
      .default({ttl: 60}),
    healthCheck: healthCheckSchema.default(envoyCheckDefaults),
    clients: z
      .strictObject({
        attempts: clientFields.attempts.default(clientDefaults.attempts),
        timeout: clientFields.timeout.default(clientDefaults.timeout),
        backoffBase: clientFields.backoffBase.default(clientDefaults.backoffBase),
        backoffMax: clientFields.backoffMax.default(clientDefaults.backoffMax),
        retryBudget: clientFields.retryBudget.default(clientDefaults.retryBudget),
        budgetWindow: clientFields.budgetWindow.default(clientDefaults.budgetWindow),
        honourRetryAfter: clientFields.honourRetryAfter.default(clientDefaults.honourRetryAfter),
        retryAfter: clientFields.retryAfter.default(clientDefaults.retryAfter),
        thinkTime: clientFields.thinkTime.default(clientDefaults.thinkTime),
      })
      .default(clientDefaults),
    faults: z.array(faultSchema).default([]),
    restrictions: z
      .array(
        z.strictObject({
          type: z.string().describe('The traffic type turned away.'),
          share: z.number().min(0).max(100).default(100).describe('The percent of its requests turned away (default 100).'),
          retryAfter: seconds.default(120).describe('Seconds the 503 asks clients to wait.'),
          from: time.default(0).describe('When the restriction starts (default: at once).'),
          to: time.optional().describe('When it is lifted (default: never).'),
        }),
      )
      .default([])
      .describe(
        "Traffic turned away at the load balancer for a while, as a runbook's restrict step does: a lever to simulate, and to sweep (`--sweep restricted=0..100` varies the first one's share).",
      ),
    setups: z
      .record(z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'expected a lower-case setup name'), setupSchema)
      .refine((s) => Object.keys(s).length > 0, 'expected at least one setup'),
  })
  .transform((scenario) => ({...scenario, tick: scenario.tick ?? defaultTick(scenario)}))
  .superRefine((scenario, ctx) => {
    if (scenario.model === 'seed' && scenario.randomness === 'drawn')
      ctx.addIssue({
        code: 'custom',
        path: ['randomness'],
        message: "expected none (or nothing) with model seed: the seed's table was computed at the mean, and the seed model draws no service times",
      })
    const cost = simulationCost(scenario)
    if (cost.serverTicks > scenarioLimits.maxServerTicks)
      ctx.addIssue({
        code: 'custom',
        path: ['duration'],
        message: `expected at most ${scenarioLimits.maxServerTicks.toExponential()} servers × ticks to simulate, got ${cost.serverTicks.toExponential(2)}: fewer servers, a shorter duration or a coarser tick`,
      })
    if (cost.cells > scenarioLimits.maxCells)
      ctx.addIssue({
        code: 'custom',
        path: ['tick'],
        message: `expected a simulation of at most ${scenarioLimits.maxCells / 1024 / 1024} Mi numbers in memory, got ${(cost.cells / 1024 / 1024).toFixed(0)} Mi: a coarser tick, a shorter duration or shorter client waits`,
      })
    if (scenario.frontedBy !== undefined && (scenario.frontedBy === 'haproxy') !== (scenario.healthCheck.haproxy !== undefined))
      ctx.addIssue({
        code: 'custom',
        path: ['frontedBy'],
        message: `expected frontedBy: haproxy exactly where healthCheck is kind: haproxy, got frontedBy: ${scenario.frontedBy} with ${scenario.healthCheck.haproxy ? '' : 'no '}HAProxy checks`,
      })
    for (const [name, setup] of Object.entries(scenario.setups)) {
      const haproxy = scenario.healthCheck.haproxy
      if (haproxy === undefined) {
        if (setup.healthCheck !== undefined)
          ctx.addIssue({
            code: 'custom',
            path: ['setups', name, 'healthCheck'],
            message: "HAProxy check settings need the scenario's healthCheck to have kind: haproxy",
          })
        continue
      }
      for (const problem of haproxyGuardProblems(setup)) ctx.addIssue({code: 'custom', path: ['setups', name, problem.key], message: problem.message})
      if ((setup.healthCheck?.observe ?? haproxy.observe) === 'layer7') continue
      for (const key of ['errorLimit', 'onError'] as const)
        if (setup.healthCheck?.[key] !== undefined)
          ctx.addIssue({
            code: 'custom',
            path: ['setups', name, 'healthCheck', key],
            message: `${key} acts only on observed traffic: expected observe: layer7 in this setup or the scenario`,
          })
    }
    // Set on the scenario, error-limit and on-error are fine if some setup observes the traffic.
    const haproxy = scenario.healthCheck.haproxy
    if (haproxy !== undefined && haproxy.observe !== 'layer7' && !Object.values(scenario.setups).some((s) => s.healthCheck?.observe === 'layer7')) {
      for (const key of ['errorLimit', 'onError'] as const)
        if (haproxy[key] !== undefined)
          ctx.addIssue({
            code: 'custom',
            path: ['healthCheck', key],
            message: `${key} acts only on observed traffic: expected observe: layer7 here or in a setup`,
          })
    }
    const pools = new Set(scenario.pools.map((p) => p.name))
    scenario.pools.forEach((pool, i) => {
      if (scenario.pools.findIndex((p) => p.name === pool.name) !== i)
        ctx.addIssue({code: 'custom', path: ['pools', i, 'name'], message: `expected a unique pool name, "${pool.name}" is used twice`})
    })
    for (const name of Object.keys(scenario.dns.weights ?? {})) {
      if (!pools.has(name))
        ctx.addIssue({code: 'custom', path: ['dns', 'weights', name], message: `no pool named "${name}"; pools are ${[...pools].join(', ')}`})
    }
    if (scenario.pools.length > 1 && scenario.dns.weights === undefined)
      ctx.addIssue({code: 'custom', path: ['dns'], message: 'expected dns.weights for every pool when there is more than one pool'})
    scenario.faults.forEach((fault, i) => {
      if (fault.to <= fault.from)
        ctx.addIssue({code: 'custom', path: ['faults', i, 'to'], message: `expected the fix (to: ${fault.to}) after the fault starts (from: ${fault.from})`})
      if (fault.from >= scenario.duration)
        ctx.addIssue({code: 'custom', path: ['faults', i, 'from'], message: `expected a start before the end of the run (${scenario.duration} s)`})
      if (fault.pool !== undefined && !pools.has(fault.pool))
        ctx.addIssue({code: 'custom', path: ['faults', i, 'pool'], message: `no pool named "${fault.pool}"; pools are ${[...pools].join(', ')}`})
      const target = scenario.pools.find((p) => p.name === (fault.pool ?? scenario.pools[0].name))
      if (target?.kind === 'sorry')
        ctx.addIssue({code: 'custom', path: ['faults', i, 'pool'], message: `pool "${target.name}" is a sorry pool and has no servers to break`})
      if (fault.kind === 'broken' && target?.servers !== undefined && fault.servers > target.servers)
        ctx.addIssue({code: 'custom', path: ['faults', i, 'servers'], message: `expected at most the pool's ${target.servers} servers, got ${fault.servers}`})
      if (fault.kind === 'thread-hold' && !(fault.type in scenario.demand.types))
        ctx.addIssue({
          code: 'custom',
          path: ['faults', i, 'type'],
          message: `no traffic type named "${fault.type}"; types are ${Object.keys(scenario.demand.types).join(', ')}`,
        })
    })
    scenario.restrictions.forEach((r, i) => {
      if (!(r.type in scenario.demand.types))
        ctx.addIssue({
          code: 'custom',
          path: ['restrictions', i, 'type'],
          message: `no traffic type named "${r.type}"; types are ${Object.keys(scenario.demand.types).join(', ')}`,
        })
      if (r.to !== undefined && r.to <= r.from)
        ctx.addIssue({
          code: 'custom',
          path: ['restrictions', i, 'to'],
          message: `expected the lift (to: ${r.to}) after the restriction starts (from: ${r.from})`,
        })
    })
  })

/**
 * What simulating a scenario costs, worked out from its numbers before anything is allocated:
 * the servers × ticks stepped through, and the numbers held at once, the big ones being the
 * record (src/sim/record.ts, bounded), the clients' retry ring (src/sim/clients.ts), the DNS
 * caches (src/sim/dns.ts) and the per-server state (src/sim/pool.ts).
 */
function simulationCost(scenario: {
  duration: number
  tick: number
  pools: Array<{servers?: number}>
  demand: {types: Record<string, number>}
  clients: {timeout: number; retryAfter: number; backoffMax: number; budgetWindow: number; attempts: number}
  setups: Record<string, {clients?: {timeout?: number; retryAfter?: number; backoffMax?: number; budgetWindow?: number; attempts?: number}}>
  dns: {ttl: number}
}): {serverTicks: number; cells: number} {
  const ticks = scenario.duration / scenario.tick
  const servers = scenario.pools.reduce((sum, p) => sum + (p.servers ?? 0), 0)
  const pools = scenario.pools.length
  const types = Object.keys(scenario.demand.types).length
  const c = {...scenario.clients}
  // A setup may make the clients wait longer or try more often: the ring is sized for the largest.
  for (const setup of Object.values(scenario.setups)) {
    const o = setup.clients ?? {}
    for (const key of ['timeout', 'retryAfter', 'backoffMax', 'budgetWindow', 'attempts'] as const) c[key] = Math.max(c[key], o[key] ?? 0)
  }
  const ringSlots = (Math.max(c.timeout, c.retryAfter) + c.backoffMax) / scenario.tick + 2
  // The record keeps at most fullResolutionPoints points per series (three numbers each once it
  // downsamples), and each pool's last ticks for gates; it no longer grows with the duration.
  const points = Math.min(ticks, fullResolutionPoints)
  const cells =
    points * (3 * (12 + 5 * pools) + 3 * pools) +
    ringSlots * types * c.attempts +
    (2 * c.budgetWindow) / scenario.tick +
    (scenario.dns.ttl / scenario.tick) * pools +
    24 * servers
  return {serverTicks: ticks * servers, cells}
}

export type ScenarioInput = z.input<typeof scenarioSchema>
export type Scenario = z.output<typeof scenarioSchema>

/**
 * Whether a scenario's runs draw arrivals and service times: its own word, else drawn. At the mean
 * a pool at 95% of its capacity with retrying clients looks safe forever, while a real one tips
 * within minutes; the kindest answer to the most dangerous question is not a default. The seed
 * model never draws (its table was computed at the mean).
 */
export const randomnessOf = (scenario: Pick<Scenario, 'randomness' | 'model'>): 'drawn' | 'none' =>
  scenario.model === 'seed' ? 'none' : (scenario.randomness ?? 'drawn')
export type PolicyInput = z.input<typeof policySchema>
/** A setup as a scenario declares it: guards, and the clients' policy where it sets one. */
export type SetupPolicy = z.output<typeof setupSchema>
