import {z} from 'zod'
import {limits} from '../../runbook/limits.js'
import type {Resolved, StepCommon} from '../../runbook/step-common.js'
import {action, common, gateField, bakeField, name} from '../../runbook/schema.js'
import {duration, countOrPercent} from '../../runbook/units.js'

/** The ways a cycle restarts a target, beside a command: each names what it acts on, by the key the runbook gives it. */
export const restartAdapters = ['ssm', 'ec2-reboot', 'ecs-replace'] as const
export type RestartAdapterName = (typeof restartAdapters)[number]

/** Seconds a restart may take by default: a command, an SSM command or a reboot 300; an ECS replacement (a task to place, pull, start and pass its checks) 600. */
export const defaultRestartSeconds = {command: 300, ssm: 300, 'ec2-reboot': 300, 'ecs-replace': 600} as const

/** Seconds after a reboot before its status checks are believed, by default. */
export const defaultRebootSettle = 30

const hookSchema = z
  .strictObject({
    command: z
      .array(z.string().min(1))
      .min(1)
      .optional()
      .describe(
        "The argv to run on this host, with no shell: {id}, {ip} and {port} are replaced per target, and SLUICE_TARGET_ID, SLUICE_TARGET_IP and SLUICE_TARGET_PORT are set where the target has them (never empty). {ip} of an instance target is the instance's private address (EC2 DescribeInstances); a live run refuses before any change when a target cannot give what the command names.",
      ),
    ssm: z
      .strictObject({
        document: z.string().min(1).describe('The SSM document to run on the instance, e.g. AWS-RunShellScript, or one of your own.'),
        parameters: z
          .record(z.string(), z.union([z.string(), z.array(z.string())]))
          .default({})
          .transform((p) => Object.fromEntries(Object.entries(p).map(([k, v]) => [k, Array.isArray(v) ? v : [v]])))
          .describe('The document\'s parameters, e.g. {commands: ["systemctl restart app"]}.'),
      })
      .optional()
      .describe(
        "SSM Run Command on each target's EC2 instance (an instance target group), waited on until it ends; a failed, cancelled or timed-out command fails the target.",
      ),
    'ec2-reboot': z
      .strictObject({
        settle: duration.default(defaultRebootSettle).describe('Seconds after the reboot before its status checks are believed.'),
      })
      .optional()
      .describe("Reboot each target's EC2 instance and wait until it is running with both status checks ok."),
    'ecs-replace': z
      .strictObject({
        cluster: z.string().min(1).describe('The ECS cluster, by name or ARN.'),
        service: z.string().min(1).describe("The service whose tasks are the pool's targets (awsvpc: registered by address)."),
      })
      .optional()
      .describe(
        "Stop each target's ECS task and wait until the service's replacement is running and healthy in its target group; the old address is not registered again.",
      ),
    timeout: duration.optional().describe('Seconds the restart may take before the target fails (command, ssm, ec2-reboot: 300; ecs-replace: 600).'),
    env: z
      .array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'expected an environment variable name'))
      .optional()
      .describe(
        "With command: names of environment variables passed on to it. By default it gets only PATH, HOME, USER, LOGNAME, LANG, LC_ALL, TZ, TMPDIR and the SLUICE_TARGET_* variables: never sluice's own AWS credentials.",
      ),
  })
  .superRefine((hook, ctx) => {
    const ways = (['command', ...restartAdapters] as const).filter((key) => hook[key] !== undefined)
    if (ways.length !== 1)
      ctx.addIssue({
        code: 'custom',
        message:
          ways.length === 0
            ? 'expected one of command (argv run here), ssm, ec2-reboot or ecs-replace'
            : `expected one of command, ssm, ec2-reboot or ecs-replace, not ${ways.join(' and ')}`,
      })
    if (hook.env !== undefined && hook.command === undefined)
      ctx.addIssue({code: 'custom', path: ['env'], message: 'env passes variables to a command; only command takes it'})
  })
  .transform((hook) => {
    const how: 'command' | RestartAdapterName = hook.command ? 'command' : (restartAdapters.find((key) => hook[key] !== undefined) ?? 'command')
    return {...hook, with: how, timeout: hook.timeout ?? defaultRestartSeconds[how], env: hook.env ?? []}
  })

/** A restart or remediation as a runbook gives it, with its way (`with`) and timeout settled. */
export type CycleHook = z.output<typeof hookSchema>

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
  restart: hookSchema.optional().describe('How each drained target is restarted: a command run here, or through AWS (ssm, ec2-reboot, ecs-replace).'),
  remediate: hookSchema.optional().describe('How each target is repaired after its restart, before it returns: a command run here, or ssm.'),
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
