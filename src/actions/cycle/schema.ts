import {z} from 'zod'
import {limits} from '../../runbook/limits.js'
import type {Resolved, StepCommon} from '../../runbook/step-common.js'
import {action, common, gateField, bakeField, name} from '../../runbook/schema.js'
import {duration, countOrPercent} from '../../runbook/units.js'

const hookSchema = z.strictObject({
  command: z
    .array(z.string().min(1))
    .min(1)
    .describe(
      "The argv to run, with no shell: {id}, {ip} and {port} are replaced per target, and SLUICE_TARGET_ID, SLUICE_TARGET_IP and SLUICE_TARGET_PORT are set where the target has them (never empty). {ip} of an instance target is the instance's private address (EC2 DescribeInstances); a live run refuses before any change when a target cannot give what the command names.",
    ),
  timeout: duration.default(300).describe('Seconds the command may take before the batch fails.'),
  env: z
    .array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected an environment variable name'))
    .default([])
    .describe(
      "Names of environment variables passed on to the command. By default it gets only PATH, HOME, USER, LOGNAME, LANG, LC_ALL, TZ, TMPDIR and the SLUICE_TARGET_* variables: never sluice's own AWS credentials.",
    ),
})

/** A cycle step as a runbook writes it. */
export const cycleSchema = z.strictObject({
  action: action('cycle', 'Drain, restart, remediate and return a pool a batch at a time.'),
  ...common,
  pool: name.describe('The pool to cycle; targets.targetGroups names its target group, or targets.haproxy.backends its backend.'),
  batch: z
    .union([
      countOrPercent,
      z
        .literal('auto')
        .describe(
          "The largest batch the targets left in rotation can cover with the headroom kept (capacityPerTarget, or targets.capacityPerTarget, × each one's warm-up, against the pool's demand), found again before every batch; at most the budget, or half the pool without one.",
        ),
    ])
    .describe('Targets taken out at once: a count (3), a share of the group (25%), or `auto`.'),
  budget: countOrPercent.optional().describe('Never more than this out of rotation at once, counting targets that are already unhealthy.'),
  headroom: z
    .number()
    .min(0)
    .max(100)
    .optional()
    .describe('Refuse a batch unless the servers left can carry current demand with this much spare, in % (with `batch: auto`, default 20).'),
  capacityPerTarget: z
    .number()
    .positive()
    .optional()
    .describe('Requests per second one target can serve; the headroom guard and `batch: auto` need it (default: targets.capacityPerTarget of the pool).'),
  restart: hookSchema.optional().describe('The command that restarts each drained target.'),
  remediate: hookSchema.optional().describe('The command that repairs each target after its restart, before it returns.'),
  slowStart: duration
    .refine(
      (s) => s === 0 || (s >= limits.slowStart.min && s <= limits.slowStart.max),
      `expected 0 (off) or ${limits.slowStart.min}–${limits.slowStart.max} s, the slow start an ALB takes`,
    )
    .optional()
    .describe("Seconds over which a returning target's share of traffic grows (0, or 30–900 on an ALB)."),
  failoverPercent: z
    .number()
    .int()
    .min(1)
    .max(100)
    .optional()
    .describe(
      "Set the group's routing failover first: below this % of healthy targets, route to all (ALB minimum healthy targets; the simulator's panic threshold).",
    ),
  drainTimeout: duration.default(300).describe('Seconds to wait for a batch to drain.'),
  healthyTimeout: duration.default(300).describe('Seconds to wait for a returned batch to pass its health checks.'),
  bake: bakeField,
  gate: gateField('The gate judged after each batch returns.'),
})

export type CycleStep = Resolved<z.output<typeof cycleSchema>> & StepCommon & {bake: number}
