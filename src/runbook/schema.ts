import {z} from 'zod'
import {limits} from './limits.js'
import {duration} from './units.js'

/** Whether a URL carries a user name or password (`https://user:pass@host`). */
function hasCredentials(url: string): boolean {
  try {
    const parsed = new URL(url)
    return parsed.username !== '' || parsed.password !== ''
  } catch {
    return false
  }
}

// Every field carries a description: `sluice schema` exports them, and an editor shows them on hover.

export const name = z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'expected a lower-case name of letters, digits and dashes')

export const gateSchema = z.strictObject({
  metric: z
    .enum(['error-rate', 'latency-p99', 'healthy-targets'])
    .describe(
      'What the gate measures. error-rate: failed requests in % (passes at or below the threshold); latency-p99: milliseconds (passes at or below); healthy-targets: % of targets healthy (passes at or above).',
    ),
  threshold: z
    .number()
    .nonnegative()
    .optional()
    .describe("The value a verdict is judged against, in the metric's unit; defaults.gate.threshold when left out."),
  window: duration.optional().describe('Seconds of data each verdict looks at (default 60).'),
  interval: duration
    .pipe(z.number().min(limits.minGateInterval, `expected at least ${limits.minGateInterval} s between verdicts`))
    .optional()
    .describe('Seconds between verdicts (default 10).'),
  failureLimit: z.number().int().min(1).max(limits.maxVerdicts).optional().describe('Failed verdicts that fail the gate (default 1).'),
  inconclusiveLimit: z
    .number()
    .int()
    .min(1)
    .max(limits.maxVerdicts)
    .optional()
    .describe('Inconclusive verdicts (no data) that fail the gate: missing data is never a pass (default 3).'),
  successes: z.number().int().min(1).max(limits.maxVerdicts).optional().describe('Consecutive passing verdicts the gate needs (default 3).'),
  pool: name.optional().describe('The pool the metric is scoped to (default: everything the runbook targets).'),
  minRequests: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe(
      'Requests a window must hold for its verdict to count: with fewer, the verdict is inconclusive and says how many it saw, since at 1% of traffic a window may hold a handful (default: no minimum). error-rate and latency-p99.',
    ),
  relativeTo: z
    .union([z.enum(['before', 'stable']), z.strictObject({pool: name.describe('The pool whose same window is the baseline.')})])
    .optional()
    .describe(
      "Judge against a baseline rather than an absolute value, for an outage where every absolute threshold is already red. before: the same metric over the window just before the step's change; stable: the other pool of the runbook over the same window (the runbook names two); {pool: NAME}: that pool. The threshold is then how far above the baseline a verdict may be (compare). error-rate and latency-p99.",
    ),
  judge: z
    .enum(['threshold', 'counts'])
    .optional()
    .describe(
      "How verdicts are reached. threshold: each window's value against the threshold (default). counts: an error-rate gate relative to a pool (relativeTo: stable or {pool}: its same intervals) or to before (the pool watched for the gate's window before the change, a look every interval) judged on the requests and errors of every interval of the bake together: it fails when the pool is worse than the baseline by more than the threshold (in points) with the confidence asked, passes when the data rule that out, and is otherwise inconclusive and bakes on, up to inconclusiveLimit more intervals, then holds.",
    ),
  confidence: z
    .number()
    .min(50)
    .max(99.99)
    .optional()
    .describe("With judge: counts: how sure a verdict must be, in %, over all of the bake's looks together (default 99)."),
  consecutiveFailures: z
    .number()
    .int()
    .min(1)
    .max(limits.maxVerdicts)
    .optional()
    .describe(
      'Failed verdicts in a row that fail the gate, beside failureLimit (which then defaults to no limit of its own): one bad window in a noisy bake is not a relapse.',
    ),
  compare: z
    .enum(['points', 'ratio'])
    .optional()
    .describe(
      "How a relative threshold is read: points, the baseline plus the threshold in the metric's unit (error-rate 2 = two points above); ratio, the baseline times the threshold (default points).",
    ),
})

/** A HAProxy backend or map file as haproxy.cfg names it: one word, as the Runtime API takes it. */
const haproxyName = z.string().regex(/^\S+$/, 'expected a name with no spaces, as haproxy.cfg gives it')

export const onFailure = z.enum(['rollback', 'hold', 'abort'])

export const common = {
  name: z.string().min(1).optional().describe('A title for the step in the plan, progress and report (default: one sluice writes from the step).'),
  timeout: duration.optional().describe('Seconds the whole step may take before it fails.'),
  onFailure: onFailure
    .optional()
    .describe(
      'What a failed gate or step does: rollback puts back the last good state, hold stops where it is, abort stops without undoing (default depends on the action).',
    ),
}

export const action = <const V extends string>(value: V, what: string) => z.literal(value).describe(what)
export const gateField = (what: string) => gateSchema.optional().describe(what)
export const bakeField = duration.optional().describe("Seconds to wait after each change before it is judged (default: defaults.bake, else the gate's window).")

/**
 * Every field of a runbook but its steps. The steps are the actions' (each action's folder holds
 * its piece), so the whole runbook schema is put together above them (src/loader/runbook-schema.ts).
 */
export const runbookFields = {
  name: name.describe("The runbook's name: lower-case letters, digits and dashes."),
  description: z.string().default('').describe('What the runbook does, in a sentence, for `sluice runbooks` and the plan.'),
  targets: z
    .strictObject({
      dns: z
        .strictObject({
          zone: z.string().min(1).describe('The Route 53 hosted zone id, e.g. Z04517273E3NUXJ3CHVE9.'),
          record: z.string().min(1).describe('The weighted record a ramp changes, e.g. api.example.com.'),
          type: z.enum(['A', 'AAAA', 'CNAME']).default('A').describe("The record's type."),
          ttl: duration.optional().describe("The record's TTL in seconds; live runs read it from Route 53."),
          sets: z
            .record(z.string().min(1), name)
            .refine((s) => Object.keys(s).length > 0, 'expected at least one weighted set')
            .describe('Set identifier → the pool its answers send clients to.'),
        })
        .optional()
        .describe('The weighted DNS record a ramp changes.'),
      haproxy: z
        .strictObject({
          socket: z
            .string()
            .min(1)
            .describe(
              'The Runtime API of a `stats socket … level admin` line in haproxy.cfg: a socket path (/run/haproxy/admin.sock), unix:/path, or host:port.',
            ),
          backends: z
            .record(name, haproxyName)
            .refine((b) => Object.keys(b).length > 0, 'expected at least one backend')
            .describe("Pool name → HAProxy backend name, e.g. {blue: be_blue, green: be_green}; each backend's servers are the pool's targets."),
          slowStart: z
            .record(name, duration)
            .optional()
            .describe(
              "Pool → the `slowstart` haproxy.cfg gives that backend's servers, in seconds. HAProxy cannot report or change it at runtime, so a runbook declares it.",
            ),
          restrictMap: haproxyName
            .optional()
            .describe('The map file of the restriction snippet (restrict and lift), as haproxy.cfg names it, e.g. /etc/haproxy/sluice-restricted.map.'),
          rampMap: haproxyName
            .optional()
            .describe(
              'The map file of the ramp snippet, as haproxy.cfg names it, e.g. /etc/haproxy/sluice-ramp.map: one `<backend> <percent>` line per backend.',
            ),
        })
        .optional()
        .describe(
          "One HAProxy as the control plane, instead of AWS (dns, targetGroups, listener, CloudWatch): cycles drain its backends' servers, a ramp changes the ramp map, restrictions go in the restriction map, all over its Runtime API.",
        ),
      targetGroups: z.record(name, z.string().min(1)).optional().describe('Pool name → target group ARN.'),
      capacityPerTarget: z
        .record(name, z.number().positive())
        .optional()
        .describe(
          'Pool name → requests per second one of its targets serves warm. A paced ramp (`schedule: auto`) steps to the largest share its receiving pool can take by it; a rollback sizes its steps back by it: each step sends the receiving pool at most a quarter of what its healthy targets serve.',
        ),
      listener: z.string().min(1).optional().describe('The load balancer listener ARN where restriction rules go.'),
      metrics: z
        .strictObject({
          source: z
            .enum(['cloudwatch', 'prometheus', 'haproxy'])
            .describe(
              "Where gate metrics come from. haproxy: HAProxy's own counters over targets.haproxy.socket (error-rate, request-rate, healthy-targets; no latency-p99).",
            ),
          loadBalancer: z.string().optional().describe('CloudWatch: the LoadBalancer dimension, `app/name/id`.'),
          loadBalancers: z.record(name, z.string()).optional().describe('CloudWatch: pool → `app/name/id` when pools sit behind different load balancers.'),
          url: z
            .string()
            .regex(/^https?:\/\/\S+$/, 'expected an http(s) URL')
            .refine(
              (url) => !hasCredentials(url),
              'a URL with credentials (user:password@) would put them in the journal and every log; give the Authorization header in an environment variable named by authorizationEnv instead',
            )
            .optional()
            .describe("Prometheus: the server's base URL, without credentials."),
          authorizationEnv: z
            .string()
            .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected the name of an environment variable')
            .optional()
            .describe(
              'Prometheus: the environment variable that holds the Authorization header (`Bearer TOKEN`, or `Basic BASE64`); its value is sent, never written anywhere.',
            ),
          queries: z
            .partialRecord(z.enum(['error-rate', 'latency-p99', 'request-rate', 'healthy-targets']), z.string().min(1))
            .optional()
            .describe('Prometheus: one instant query per metric; `$window` and `$pool` are filled in.'),
        })
        .optional()
        .describe('Where gates read their metrics.'),
    })
    .describe('What the runbook acts on.'),
  defaults: z
    .strictObject({
      bake: duration.optional().describe('Seconds to wait after each change before it is judged, for steps that give none.'),
      gate: gateSchema.omit({metric: true}).partial().optional().describe('Gate settings for gates that leave them out.'),
    })
    .default({})
    .describe('Settings for steps that leave them out.'),
  rehearsal: z
    .strictObject({
      scenario: z.string().min(1).describe('A built-in scenario name, or a scenario file relative to the runbook.'),
      setup: z.string().optional().describe("One of the scenario's setups (default: its first)."),
      startAt: duration.default(0).describe('Scenario second at which the runbook starts: the state of the incident when the operator begins.'),
    })
    .optional()
    .describe('What `sluice run --dry-run` rehearses against.'),
}

type Fields = typeof runbookFields
export type TargetsData = z.output<Fields['targets']>
export type DefaultsData = z.output<Fields['defaults']>
export type RehearsalData = z.output<Fields['rehearsal']>
export type GateData = z.output<typeof gateSchema>
export type OnFailure = z.output<typeof onFailure>
