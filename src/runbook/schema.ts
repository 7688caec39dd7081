import {z} from 'zod'
import {countOrPercent, duration} from './units.js'

const name = z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'expected a lower-case name of letters, digits and dashes')

export const gateSchema = z.strictObject({
  /** error-rate: failed requests in % (pass at or below); latency-p99: ms (pass at or below); healthy-targets: % of targets healthy (pass at or above). */
  metric: z.enum(['error-rate', 'latency-p99', 'healthy-targets']),
  threshold: z.number().nonnegative().optional(),
  /** Seconds of data each verdict looks at. */
  window: duration.optional(),
  /** Seconds between verdicts. */
  interval: duration.optional(),
  /** Failed verdicts that fail the gate. */
  failureLimit: z.number().int().min(1).optional(),
  /** Inconclusive verdicts (no data) that fail the gate: missing data is never a pass. */
  inconclusiveLimit: z.number().int().min(1).optional(),
  /** Consecutive passing verdicts the gate needs. */
  successes: z.number().int().min(1).optional(),
  /** The pool the metric is scoped to (default: everything the runbook targets). */
  pool: name.optional(),
})

const hookSchema = z.strictObject({
  /** argv; {id}, {ip} and {port} are replaced per target, and SLUICE_TARGET_ID, _IP, _PORT are set. */
  command: z.array(z.string().min(1)).min(1),
  timeout: duration.default(300),
})

const onFailure = z.enum(['rollback', 'hold', 'abort'])

const common = {
  name: z.string().min(1).optional(),
  timeout: duration.optional(),
  onFailure: onFailure.optional(),
}

const scheduleSchema = z.union([
  z.array(z.number()).min(1),
  z.strictObject({linear: z.strictObject({from: z.number(), to: z.number(), steps: z.number().int().min(2)})}),
  z.strictObject({exponential: z.strictObject({from: z.number(), factor: z.number().gt(1), to: z.number()})}),
])

export const stepSchema = z.discriminatedUnion('action', [
  z.strictObject({action: z.literal('freeze'), ...common, reason: z.string().min(1), expires: duration.optional()}),
  z.strictObject({action: z.literal('unfreeze'), ...common}),
  z.strictObject({
    action: z.literal('restrict'),
    ...common,
    type: name,
    paths: z.array(z.string().startsWith('/')).default([]),
    headers: z.record(z.string(), z.array(z.string()).min(1)).default({}),
    retryAfter: duration.default(120),
  }),
  z.strictObject({action: z.literal('lift'), ...common, type: name}),
  z.strictObject({
    action: z.literal('cycle'),
    ...common,
    pool: name,
    batch: countOrPercent,
    /** Never more than this out of rotation at once, counting targets that are already unhealthy. */
    budget: countOrPercent.optional(),
    /** Refuse a batch unless the servers left can carry current demand with this much spare, in %. */
    headroom: z.number().min(0).max(100).optional(),
    capacityPerTarget: z.number().positive().optional(),
    restart: hookSchema.optional(),
    remediate: hookSchema.optional(),
    slowStart: duration.optional(),
    /** Set the group's routing failover first: below this % of healthy targets, route to all (ALB minimum healthy targets; the simulator's panic threshold). */
    failoverPercent: z.number().int().min(1).max(100).optional(),
    drainTimeout: duration.default(300),
    healthyTimeout: duration.default(300),
    bake: duration.optional(),
    gate: gateSchema.optional(),
  }),
  z.strictObject({
    action: z.literal('ramp'),
    ...common,
    /** The weighted set identifier that gains traffic. */
    set: z.string().min(1),
    schedule: scheduleSchema,
    bake: duration.optional(),
    /** Allow a bake shorter than the record's TTL (clients will not all have seen a step before it is judged). */
    allowShortBake: z.boolean().default(false),
    gate: gateSchema.optional(),
  }),
  z.strictObject({action: z.literal('approve'), ...common, message: z.string().min(1)}),
  z.strictObject({action: z.literal('wait'), ...common, for: duration}),
  z.strictObject({action: z.literal('check'), ...common, gate: gateSchema, bake: duration.optional()}),
])

export const runbookSchema = z.strictObject({
  name,
  description: z.string().default(''),
  targets: z.strictObject({
    dns: z
      .strictObject({
        zone: z.string().min(1),
        record: z.string().min(1),
        type: z.enum(['A', 'AAAA', 'CNAME']).default('A'),
        /** The record's TTL in seconds; live runs read it from Route 53. */
        ttl: duration.optional(),
        /** Set identifier → the pool its answers send clients to. */
        sets: z.record(z.string().min(1), name).refine((s) => Object.keys(s).length > 0, 'expected at least one weighted set'),
      })
      .optional(),
    /** Pool name → target group ARN. */
    targetGroups: z.record(name, z.string().min(1)).optional(),
    listener: z.string().min(1).optional(),
    metrics: z
      .strictObject({
        source: z.enum(['cloudwatch', 'prometheus']),
        /** CloudWatch: the LoadBalancer dimension, `app/name/id`. */
        loadBalancer: z.string().optional(),
        /** CloudWatch: pool → `app/name/id` when pools sit behind different load balancers. */
        loadBalancers: z.record(name, z.string()).optional(),
        /** Prometheus: the server's base URL. */
        url: z.string().regex(/^https?:\/\/\S+$/, 'expected an http(s) URL').optional(),
        /** Prometheus: one instant query per metric; `$window` and `$pool` are filled in. */
        queries: z.partialRecord(z.enum(['error-rate', 'latency-p99', 'request-rate', 'healthy-targets']), z.string().min(1)).optional(),
      })
      .optional(),
  }),
  defaults: z
    .strictObject({
      bake: duration.optional(),
      gate: gateSchema.omit({metric: true}).partial().optional(),
    })
    .default({}),
  rehearsal: z
    .strictObject({
      /** A built-in scenario name, or a scenario file relative to the runbook. */
      scenario: z.string().min(1),
      setup: z.string().optional(),
      /** Scenario second at which the runbook starts: the state of the incident when the operator begins. */
      startAt: duration.default(0),
    })
    .optional(),
  steps: z.array(stepSchema).min(1),
})

export type RunbookInput = z.input<typeof runbookSchema>
export type RunbookData = z.output<typeof runbookSchema>
export type StepData = z.output<typeof stepSchema>
export type GateData = z.output<typeof gateSchema>
export type ScheduleData = z.output<typeof scheduleSchema>
export type OnFailure = z.output<typeof onFailure>
