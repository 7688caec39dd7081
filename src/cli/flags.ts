import {Args, Flags, type Interfaces} from '@oclif/core'
import {InputError} from '../errors.js'
import {endpointProblem} from '../input/endpoint-url.js'
import {related} from './flag-relations.js'
import type {AwsOptions} from '../aws/clients.js'
import {limits} from '../runbook/limits.js'
import {duration, durationUpTo} from '../runbook/units.js'

// Every flag sluice has, once, grouped by purpose. A command spreads the groups it uses, so its
// --help lists only flags that mean something to it, and its flag values' types are inferred
// from these definitions (FlagValues<typeof group>) rather than written out again. Which flags go
// together, or not, is declared on them with related() (flag-relations.ts), so oclif refuses a
// bad combination before run() and help says it beside each flag.

export type FlagValues<F extends Interfaces.FlagInput> = Interfaces.InferredFlags<F>

/** A flag value that does not parse: bad input that names its flag, worded as oclif words its own. */
function badValue(flag: string, message: string): InputError {
  return new InputError(`--${flag}: ${message}`)
}

/** A decimal number, with the same bounds checks oclif gives whole numbers. */
export function decimal(options: {description: string; min?: number; max?: number; helpValue?: string}) {
  return Flags.custom<number>({
    description: options.description,
    helpValue: options.helpValue ?? 'NUMBER',
    async parse(input, _context, flag) {
      const value = Number(input)
      if (input.trim() === '' || !Number.isFinite(value)) throw badValue(flag.name, `expected a number but received: ${input}`)
      if (options.min !== undefined && value < options.min)
        throw badValue(flag.name, `expected a number greater than or equal to ${options.min} but received: ${input}`)
      if (options.max !== undefined && value > options.max)
        throw badValue(flag.name, `expected a number less than or equal to ${options.max} but received: ${input}`)
      return value
    },
  })()
}

/** Seconds, in the forms a runbook accepts: `90`, `90s`, `5m`, `1h`; within a runbook's bounds, and the flag's own. */
export function seconds(options: {description: string; min?: number; max?: number}) {
  return Flags.custom<number>({
    description: options.description,
    helpValue: 'DURATION',
    async parse(input, _context, flag) {
      // A flag bounded beyond a runbook's day (simulate --duration) is held to its own bound instead.
      const schema = options.max !== undefined && options.max > limits.maxSeconds ? durationUpTo(options.max) : duration
      const parsed = schema.safeParse(/^\d+(\.\d+)?(e\d+)?$/.test(input) ? Number(input) : input)
      if (!parsed.success) {
        const issue = parsed.error.issues[0]
        throw badValue(flag.name, `${issue.code === 'too_big' ? issue.message : 'expected a duration such as 90, 90s, 5m or 1h'} but received: ${input}`)
      }
      if (options.min !== undefined && parsed.data < options.min) throw badValue(flag.name, `expected at least ${options.min} s but received: ${input}`)
      if (options.max !== undefined && parsed.data > options.max) throw badValue(flag.name, `expected at most ${options.max} s but received: ${input}`)
      return parsed.data
    },
  })()
}

/** `KEY=VALUE`, split at the first `=`. */
export function pair(options: {description: string; helpValue: string}) {
  return Flags.custom<{key: string; value: string}>({
    description: options.description,
    helpValue: options.helpValue,
    async parse(input, _context, flag) {
      const eq = input.indexOf('=')
      if (eq <= 0) throw badValue(flag.name, `expected ${options.helpValue} but received: ${input}`)
      return {key: input.slice(0, eq), value: input.slice(eq + 1)}
    },
  })
}

/** A hook command as argv: split on spaces, never handed to a shell. */
export function argv(description: string) {
  return Flags.custom<string[]>({
    description,
    helpValue: 'COMMAND',
    async parse(input, _context, flag) {
      const words = input.split(/\s+/).filter(Boolean)
      if (words.length === 0) throw badValue(flag.name, 'expected a command but received an empty string')
      return words
    },
  })()
}

/** The runbook argument of run, plan, status and iam-policy: a file, or a shipped runbook by name. */
export const runbookArg = Args.string({description: 'A runbook YAML file, or the name of a shipped runbook (`sluice runbooks` lists them).', required: true})

/** Where AWS calls go and as whom: the run's own resources, and a team's state table. */
export const awsFlags = {
  'endpoint-url': Flags.custom<string>({
    description: 'Send AWS calls to this endpoint (also AWS_ENDPOINT_URL), e.g. a local emulator; an http(s) URL with no user name, password or query.',
    helpValue: 'URL',
    async parse(input) {
      const problem = endpointProblem(input, '--endpoint-url')
      if (problem) throw problem
      return input
    },
  })(),
  profile: Flags.string({description: 'AWS profile from the shared config files.', env: 'AWS_PROFILE'}),
  region: Flags.string({description: 'AWS region (also AWS_REGION).'}),
}

/** A pool's readings in Prometheus: the server, and the mapping file that names the queries and gives the checks (calibrate, assess). */
const prometheusPair = 'a Prometheus pool is named by both --prometheus URL and --mapping FILE'
export const prometheusFlags = {
  prometheus: related(
    Flags.string({
      description: "Read the pool from this Prometheus server's HTTP API, its base URL (credentials go in the variable the mapping's authorizationEnv names).",
      helpValue: 'URL',
    }),
    {dependsOn: {flags: ['mapping'], why: prometheusPair}},
  ),
  mapping: related(
    Flags.string({
      description: "The pool's mapping file, its queries (requests, errors, healthy, servers, latency) and the checks Prometheus does not hold.",
      helpValue: 'FILE',
    }),
    {dependsOn: {flags: ['prometheus'], why: prometheusPair}},
  ),
}

/**
 * The Prometheus pool the flags name, or null when they name none: a URL that carries no
 * credentials (it is written in the scenario and in errors). oclif has refused one flag of the
 * two without the other (dependsOn).
 */
export function prometheusOf(flags: Partial<FlagValues<typeof prometheusFlags>>): {url: string; mapping: string} | null {
  if (flags.prometheus === undefined || flags.mapping === undefined) return null
  let url: URL | null = null
  try {
    url = new URL(flags.prometheus)
  } catch {
    url = null
  }
  if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:'))
    throw badValue('prometheus', `expected an http(s) URL such as http://prometheus:9090 but received: ${flags.prometheus}`)
  if (url.username !== '' || url.password !== '')
    throw badValue(
      'prometheus',
      "a URL with credentials (user:password@) would put them in the scenario and every log; give the Authorization header in an environment variable named by the mapping's authorizationEnv instead",
    )
  return {url: flags.prometheus, mapping: flags.mapping}
}

/** Where journals, locks and the freeze live. */
export const stateFlags = {
  state: Flags.string({
    description:
      'Where journals, locks, controls and the freeze live: a directory, or dynamodb://TABLE or s3://BUCKET/PREFIX for a team (default: $SLUICE_STATE, else a sluice.yaml in this tree or ~/.config/sluice/config.yaml naming it, else ~/.local/state/sluice).',
    helpValue: 'DIR|dynamodb://TABLE|s3://BUCKET/PREFIX',
  }),
}

/** Whether a run changes anything, and who says yes. */
export const runFlags = {
  // No default: a flag only a rehearsal reads depends on this one being given (rehearsalOnly).
  'dry-run': Flags.boolean({description: 'Rehearse against the simulated fleet instead of changing anything.'}),
  yes: Flags.boolean({
    char: 'y',
    description:
      'Confirm the plan without asking. Live, it does not answer approve steps (see --approve); in a rehearsal, which changes nothing, it answers them too.',
    default: false,
  }),
}

/** A live run started in a process and session of its own (`sluice run … --detach`), and the id the detached process runs under. */
export const detachFlags = {
  detach: related(
    Flags.boolean({
      description:
        'Start the live run as a process of its own, away from this terminal (its output in a log beside the state), print its run id and the commands to watch and steer it, and exit; it keeps going when this terminal or its session goes.',
      default: false,
    }),
    // It needs --yes too (detachNeedsYes): oclif counts a boolean with a default as given, so that is checked by the command.
    {exclusive: {flags: ['dry-run'], why: 'a rehearsal changes nothing and takes seconds: run it here'}},
  ),
  // The run id a detached run's own process runs under: minted by the terminal that started it, which prints it.
  'run-id': Flags.string({hidden: true}),
}

/** Why --detach needs --yes, said when it is missing. */
export const detachNeedsYes =
  '--detach: needs --yes; a detached run has no terminal to confirm its plan on (approve steps are answered by `sluice promote RUN` or --approve)'

/** Approve steps answered in advance, for scripted runs. */
export const approveFlags = {
  approve: Flags.string({
    description:
      'Approve this approve step in advance, by its number in the plan or its name (repeatable). Otherwise a live approve step is answered at the prompt or by `sluice promote RUN`, and waits up to its timeout (default 1 h).',
    helpValue: 'STEP',
    multiple: true,
  }),
}

/** For runs that lock what they change. */
export const lockFlags = {
  'new-run': Flags.boolean({
    description:
      "Start a new run although this runbook's latest run never finished: only once that run's process is provably dead (its pid gone from this host, or its lease lapsed while sluice watched); its journal stays for `sluice rollback`. Without it such a run is refused (exit 4), naming it.",
    default: false,
  }),
  'break-lock': Flags.string({
    description:
      'Break one lock of a dead process before taking the locks, by its lock id (`sluice locks` shows it); refused while its holder renews its lease; asks first (--yes answers); recorded in the journal of the run whose lock it was.',
    helpValue: 'LOCK_ID',
  }),
}

/** Whether a simulated run draws its arrivals and service times: rehearsals, simulate and assess alike. */
export const randomnessFlag = Flags.option({
  description:
    "drawn: requests arrive as a Poisson process and service times vary, from the seed; none: arrivals at the mean, every service time exact. Default: the scenario's (drawn unless it says none).",
  options: ['drawn', 'none'] as const,
})()

/** What a rehearsal runs against. */
export const rehearsalFlags = {
  pace: decimal({description: 'Rehearse at this many simulated seconds per real second, to watch it unfold (default: as fast as possible).', min: 0.001}),
  scenario: Flags.string({char: 's', description: "The scenario to rehearse against (default: the runbook's rehearsal.scenario).", helpValue: 'NAME|FILE'}),
  setup: Flags.string({description: "The scenario setup to rehearse against (default: the runbook's, or the scenario's first).", helpValue: 'NAME'}),
  rollback: Flags.option({
    description:
      'Once the runbook has ended, rehearse `sluice rollback` of its run: ramped (in steps onto the receiving pool, behind the gates) or now (at once, --now). The report says what the way back cost.',
    options: ['ramped', 'now'] as const,
  })(),
  randomness: randomnessFlag,
  seeds: Flags.integer({
    description:
      "Rehearse on this many seeds, the scenario's own first (the one reported) and the ones after it, and say on how many it was safe and how each other one ended; the exit code is the worst run's. The others run with every approval answered yes. Default: 10 where randomness is drawn, 1 where none.",
    min: 1,
    max: 50,
    helpValue: 'N',
  }),
}

/**
 * The flags of a command that runs or rehearses (run, ramp, cycle, restrict, lift) that only a
 * rehearsal reads: each needs --dry-run, so a live run refuses one rather than ignore it. The
 * rehearsal groups themselves are shared with commands that always rehearse (tune), so the
 * relation is added here, where --dry-run is a flag.
 */
export function rehearsalOnly<F extends Record<string, {description?: string}>>(flags: F): F {
  const why = 'only for a rehearsal: add --dry-run to rehearse, or leave the rehearsal flags out to run live'
  return Object.fromEntries(Object.entries(flags).map(([name, flag]) => [name, related(flag, {dependsOn: {flags: ['dry-run'], why}})])) as F
}

/** How `rollback` and `abort --rollback` move weights back: in steps behind gates, unless this. */
export const nowFlag = Flags.boolean({
  description: 'Move weights back in one change each, without steps or gates: for when the receiving side is known to hold.',
  default: false,
})

/** How a rollback may plan where the run's journal and the world part ways (`rollback`, `abort --rollback`). */
export const wayBackFlags = {
  'from-live': Flags.boolean({
    description:
      'Where what the run left has changed since (a hand change to the weights, a restriction or freeze removed), plan from what is there now: weights go back from the live weights, the rest is left as it is. Without it, such a difference refuses the rollback (exit 4) with each one named.',
    default: false,
  }),
  ungated: Flags.boolean({
    description:
      'Take weights back in steps that no gate judges (held for the bake) when neither the steps that moved them nor any step on the receiving pool has a gate. Without it, such a way back is refused (exit 4).',
    default: false,
  }),
}

/** A scenario for commands that have no runbook to name one: a built-in name or a file. */
export const scenarioFlag = Flags.string({
  char: 's',
  description: 'A built-in scenario name or a path to a scenario YAML file.',
  default: 'outlook-2026',
  helpValue: 'NAME|FILE',
})

/** A single-action command rehearses against a scenario of its own, from a second of it. */
export const stepRehearsalFlags = {
  ...rehearsalFlags,
  // No default here: a live run refuses rehearsal flags it is given, so it must be able to tell.
  scenario: Flags.string({
    char: 's',
    description: 'A built-in scenario name or a path to a scenario YAML file (default outlook-2026).',
    helpValue: 'NAME|FILE',
  }),
  'start-at': seconds({description: 'Scenario second at which the step starts (default 0).'}),
}

/** Reports a rehearsal can save. */
export const reportFlags = {
  html: Flags.string({description: 'Save the rehearsal report as an HTML page.', helpValue: 'FILE'}),
  svg: Flags.string({description: 'Save the rehearsal chart as SVG.', helpValue: 'FILE'}),
}

/** The live resources a single-action command changes, by kind. */
const weightedRecord = 'the hosted zone, the weighted record and its set identifiers name the weights together'
const haproxyTarget =
  "a HAProxy target is its Runtime API, the restriction map its config names and the backends gates read, together (as a runbook's targets.haproxy)"

export const targetFlags = {
  dns: {
    record: related(Flags.string({description: 'Live: the weighted record name.', helpValue: 'NAME'}), {
      dependsOn: {flags: ['zone', 'sets'], why: weightedRecord},
    }),
    'record-type': Flags.string({description: 'Live: the weighted record type.', options: ['A', 'AAAA', 'CNAME'], default: 'A'}),
    sets: related(
      Flags.string({description: "Live: the record's weighted set identifiers, comma-separated (each is also a pool name for gates).", helpValue: 'ID,ID'}),
      {dependsOn: {flags: ['zone', 'record'], why: weightedRecord}},
    ),
    zone: related(Flags.string({description: 'Live: the Route 53 hosted zone id.', helpValue: 'ID'}), {
      dependsOn: {flags: ['record', 'sets'], why: weightedRecord},
    }),
  },
  targetGroup: {
    'target-group': pair({description: 'Live: POOL=ARN of a target group (repeatable).', helpValue: 'POOL=ARN'})({multiple: true}),
  },
  listener: {
    listener: Flags.string({description: 'Live: the listener ARN restrictions go on.', helpValue: 'ARN'}),
  },
  haproxy: {
    'haproxy-socket': related(
      Flags.string({
        description: "Live: a HAProxy Runtime API (socket path or host:port) whose restriction map the step changes, instead of an ALB's listener.",
        helpValue: 'PATH',
      }),
      {dependsOn: {flags: ['restrict-map', 'backend'], why: haproxyTarget}},
    ),
    'restrict-map': related(Flags.string({description: "Live: the HAProxy restriction map's file, as haproxy.cfg names it.", helpValue: 'FILE'}), {
      dependsOn: {flags: ['haproxy-socket'], why: haproxyTarget},
    }),
    backend: pair({
      description: 'Live, with --haproxy-socket: POOL=NAME of the HAProxy backends gates read (repeatable, at least one).',
      helpValue: 'POOL=NAME',
    })({
      multiple: true,
    }),
  },
  metrics: {
    'load-balancer': Flags.string({description: 'Live: the CloudWatch LoadBalancer dimension for gates (app/NAME/ID).', helpValue: 'DIMENSION'}),
  },
}

/** The gate's settings: each needs the metric, which says what the gate measures. */
const ofTheGate = <F extends {description?: string}>(flag: F) =>
  related(flag, {dependsOn: {flags: ['gate-metric'], why: 'the metric says what the gate measures'}})

/** A gate on the step, for the steps that take one. */
export const gateFlags = {
  'gate-interval': ofTheGate(seconds({description: 'Seconds between verdicts (default 10).'})),
  'gate-metric': Flags.string({description: 'Gate metric.', options: ['error-rate', 'latency-p99', 'healthy-targets']}),
  'gate-pool': ofTheGate(Flags.string({description: 'Pool the gate metric is scoped to.'})),
  'gate-successes': ofTheGate(Flags.integer({description: 'Passing verdicts in a row the gate needs (default 3).', min: 1})),
  'gate-threshold': ofTheGate(decimal({description: 'Gate threshold: % for error-rate and healthy-targets, ms for latency-p99.', min: 0})),
  'gate-window': ofTheGate(seconds({description: 'Seconds of data each verdict looks at (default 60).'})),
}

/** Which flag supplied each gate field, so a runbook check names the flag. */
export const gateFlagPaths = {
  'steps[0].gate.threshold': '--gate-threshold',
  'steps[0].gate.window': '--gate-window',
  'steps[0].gate.interval': '--gate-interval',
  'steps[0].gate.successes': '--gate-successes',
  'steps[0].gate.pool': '--gate-pool',
  'steps[0].gate': '--gate-metric',
}

/** The gate a single-action command's flags describe, or none (oclif has refused a gate setting without --gate-metric). */
export function gateFromFlags(flags: Partial<FlagValues<typeof gateFlags>>): Record<string, unknown> | undefined {
  if (flags['gate-metric'] === undefined) return undefined
  const fields = {
    metric: flags['gate-metric'],
    threshold: flags['gate-threshold'],
    window: flags['gate-window'],
    interval: flags['gate-interval'],
    successes: flags['gate-successes'],
    pool: flags['gate-pool'],
  }
  return Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined))
}

/** The AWS settings of a command, from its AWS flags: the one place they become SDK options. */
export function awsOptionsOf(flags: Partial<FlagValues<typeof awsFlags>>): AwsOptions {
  return {region: flags.region, profile: flags.profile, endpoint: flags['endpoint-url']}
}
