import {InputError} from '../errors.js'
import {flagSite, type Path, type Problem, type ProblemSite} from '../input/problems.js'
import {schemaProblems} from '../input/schema-problems.js'
import {describeIssue, readInputText, specificIssue, YamlSource} from '../input/yaml-source.js'
import {runbookSchema, type GateData, type RunbookInput, type ScheduleData, type RunbookData, type StepData} from './schema.js'
import {actionNamed, actionOf} from '../actions/registry.js'
import {describeCount, type CountOrPercent} from './units.js'
import {limits, maxSecondsText} from './limits.js'
import {defaultBake, gateDefaults, type Gate, type Runbook, type Step, type StepCommon} from './runbook.js'
import {backendOf} from './targets.js'

export function loadRunbookFile(file: string): Runbook {
  let text: string
  try {
    text = readInputText(file)
  } catch (error) {
    if (error instanceof InputError) throw error
    throw new InputError(`${file}: cannot read the runbook: ${(error as NodeJS.ErrnoException).code ?? String(error)}`)
  }
  return parseRunbook(file, text)
}

/**
 * Parses and checks a runbook file: the schema first, then what the schema cannot see. Every
 * problem of the stage that finds any is reported at once, so one edit fixes them all.
 */
export function parseRunbook(file: string, text: string): Runbook {
  const source = YamlSource.parse(file, text)
  const checked = schemaProblems(runbookSchema, source.data())
  if (!checked.success) throw source.error(checked.problems)
  return {...checkRunbook(checked.data, file, source), source: {kind: 'file', text}}
}

/**
 * A runbook made from command-line flags (the single-action commands). Problems are reported
 * against the flag that supplied the value.
 */
export function runbookFromFlags(input: RunbookInput, flagFor: (path: Path) => string | undefined): Runbook {
  const result = runbookSchema.safeParse(input)
  const site = flagSite(flagFor)
  if (!result.success) {
    // One step from flags has few fields, and the first problem names its flag.
    const issue = specificIssue(result.error.issues[0])
    throw new InputError(`${site.locate(issue.path)}: ${describeIssue(issue, input)}`)
  }
  return {...checkRunbook(result.data, '(command line)', site), source: {kind: 'flags', input}}
}

/** What the schema cannot see: references between steps and targets, budgets, bake against TTL, gate thresholds. */
export function checkRunbook(data: RunbookData, file: string, site: ProblemSite): Omit<Runbook, 'source'> {
  const problems: Problem[] = []
  // Checks go on after a problem, with whatever value they have, so one pass finds every problem;
  // nothing resolved here is used unless none was found.
  const fail = (path: Path, message: string): void => {
    problems.push({path, message})
  }
  // Route 53 answers with zone ids as `/hostedzone/Z123`, and people paste them that way too.
  const targets = data.targets.dns ? {...data.targets, dns: {...data.targets.dns, zone: data.targets.dns.zone.replace(/^\/hostedzone\//, '')}} : data.targets
  const backend = backendOf(targets)
  const pools = backend.pools
  const sets = backend.weightedSets

  const resolveGate = (gate: GateData, path: Path): Gate => {
    const d = data.defaults.gate ?? {}
    const threshold = gate.threshold ?? d.threshold
    if (threshold === undefined) fail(path, `gate on ${gate.metric} has no threshold, and defaults.gate sets none`)
    if (!targets.metrics) fail(path, 'a gate needs targets.metrics to say where its metric comes from')
    const pool = gate.pool ?? d.pool
    if (pool !== undefined && !pools.has(pool)) fail([...path, 'pool'], `no pool named "${pool}" in targets; pools are ${[...pools].join(', ') || 'none'}`)
    if (gate.metric === 'error-rate' && threshold !== undefined && threshold > 100) fail([...path, 'threshold'], `expected an error rate in % (0–100), got ${threshold}`)
    if (gate.metric === 'healthy-targets' && threshold !== undefined && threshold > 100) fail([...path, 'threshold'], `expected a share of healthy targets in % (0–100), got ${threshold}`)
    const resolved: Gate = {
      metric: gate.metric,
      threshold: threshold ?? Number.NaN,
      window: gate.window ?? d.window ?? gateDefaults.window,
      interval: gate.interval ?? d.interval ?? gateDefaults.interval,
      failureLimit: gate.failureLimit ?? d.failureLimit ?? gateDefaults.failureLimit,
      inconclusiveLimit: gate.inconclusiveLimit ?? d.inconclusiveLimit ?? gateDefaults.inconclusiveLimit,
      successes: gate.successes ?? d.successes ?? gateDefaults.successes,
      ...(pool === undefined ? {} : {pool}),
    }
    // A window shorter than the interval leaves seconds no verdict ever looks at.
    if (resolved.window < resolved.interval)
      fail([...path, gate.window === undefined ? 'interval' : 'window'], `expected a window of at least the interval (${resolved.interval} s), got ${resolved.window} s`)
    if (resolved.successes * resolved.interval > limits.maxSeconds)
      fail([...path, gate.successes === undefined ? 'interval' : 'successes'], `expected successes × interval of at most ${maxSecondsText}, got ${resolved.successes} × ${resolved.interval} s`)
    return resolved
  }

  checkControlPlane(data, fail)
  checkMetricsSource(data, fail)

  const steps = data.steps.map((raw, index): Step => {
    const path = ['steps', index]
    const common: StepCommon = {
      index,
      // Set below, once every step is resolved: a title can name what resolving worked out.
      title: '',
      onFailure: raw.onFailure ?? actionNamed(raw.action).defaultOnFailure,
      ...(raw.timeout === undefined ? {} : {timeout: raw.timeout}),
    }
    return resolveStep(raw, common, path)
  })
  if (problems.length > 0) throw site.error(problems)
  for (const step of steps) step.title = data.steps[step.index].name ?? (actionOf(step).title as (s: Step) => string)(step)

  function resolveStep(raw: StepData, common: StepCommon, path: Path): Step {
    switch (raw.action) {
      case 'restrict':
      case 'lift': {
        if (backend.restrictionsLabel === undefined)
          fail(path, `a ${raw.action} step needs targets.listener (the load balancer listener its rules go on) or targets.haproxy.restrictMap (the map of HAProxy's restriction snippet)`)
        for (const problem of backend.stepProblems(raw, path)) fail(problem.path, problem.message)
        // A listener rule matches requests, not a traffic type's name; the simulator could match
        // by type, but a runbook is rehearsed to be run, so it is held to what live can do.
        if (raw.action === 'restrict' && raw.paths.length === 0 && Object.keys(raw.headers).length === 0)
          fail([...path, 'paths'], `expected paths or headers that identify ${raw.type} traffic: a listener rule cannot match a traffic type by name`)
        return {...raw, ...common}
      }
      case 'cycle': {
        for (const problem of backend.stepProblems(raw, path)) fail(problem.path, problem.message)
        if (raw.budget && exceeds(raw.batch, raw.budget))
          fail([...path, 'batch'], `a batch of ${describeCount(raw.batch)} is larger than the disruption budget of ${describeCount(raw.budget)}`)
        if (raw.headroom !== undefined && raw.capacityPerTarget === undefined)
          fail([...path, 'headroom'], 'a headroom guard needs capacityPerTarget (requests per second one target can serve)')
        const gate = raw.gate ? resolveGate(raw.gate, [...path, 'gate']) : undefined
        return {...raw, ...common, gate, bake: raw.bake ?? data.defaults.bake ?? (gate ? gate.window : 0)}
      }
      case 'ramp': {
        const dns = targets.dns
        // On HAProxy the sets are the ramp map's keys: backend names.
        const {noun, plural, at} = backend.sets
        if (!sets) fail(path, 'a ramp step needs a weighted DNS record (targets.dns) or a HAProxy ramp map (targets.haproxy.rampMap)')
        else if (!(raw.set in sets)) fail([...path, 'set'], `no ${noun} "${raw.set}" in ${at}; it has ${Object.keys(sets).join(', ')}`)
        else if (Object.keys(sets).length < 2) fail([...path, 'set'], `a ramp moves traffic between ${plural}: ${at} needs at least two`)
        const schedule = expandSchedule(raw.schedule, [...path, 'schedule'], fail)
        const bake = raw.bake ?? data.defaults.bake ?? defaultBake
        // HAProxy routes each request by the map as it is (a TTL of 0), so only a DNS record's TTL bounds the bake.
        if (dns?.ttl !== undefined && bake < dns.ttl && !raw.allowShortBake)
          fail([...path, raw.bake === undefined ? 'action' : 'bake'], `a bake of ${bake} s is shorter than the record's TTL of ${dns.ttl} s, so not every client would have seen a step before it is judged; make it at least ${dns.ttl} s, or set allowShortBake: true`)
        const gate = raw.gate ? resolveGate(raw.gate, [...path, 'gate']) : undefined
        return {...raw, ...common, schedule, bake, gate}
      }
      case 'check': {
        const gate = resolveGate(raw.gate, [...path, 'gate'])
        return {...raw, ...common, gate, bake: raw.bake ?? gate.window}
      }
      default:
        return {...raw, ...common}
    }
  }

  return {file, name: data.name, description: data.description, targets, rehearsal: data.rehearsal, steps, locate: (path) => site.locate(path)}
}

/**
 * One control plane per runbook: HAProxy, or AWS. A run that drove both would lock, confirm,
 * preflight and roll back across two systems with no common view of either. Prometheus metrics
 * go with either (HAProxy's exporter, scraped by a Prometheus server).
 */
function checkControlPlane(data: RunbookData, fail: (path: Path, message: string) => void): void {
  const {haproxy, metrics} = data.targets
  if (metrics?.source === 'haproxy' && !haproxy)
    fail(['targets', 'metrics', 'source'], "metrics source haproxy reads HAProxy's counters over its Runtime API, and the runbook has no targets.haproxy to say where that is")
  if (!haproxy) return
  for (const problem of backendOf(data.targets).problems()) fail(problem.path, problem.message)
}

/** What the metrics source needs to read every metric the runbook's steps read, checked before anything runs live. */
function checkMetricsSource(data: RunbookData, fail: (path: Path, message: string) => void): void {
  const metrics = data.targets.metrics
  const at = ['targets', 'metrics']
  if (metrics?.source === 'cloudwatch' && !metrics.loadBalancer)
    fail(at, 'expected loadBalancer (the app/NAME/ID dimension) for CloudWatch gates')
  if (metrics?.source === 'haproxy') {
    data.steps.forEach((step, index) => {
      if ('gate' in step && step.gate?.metric === 'latency-p99')
        fail(['steps', index, 'gate', 'metric'], "HAProxy's stats have no latency percentiles (only an average of the last 1024 requests), so a latency-p99 gate cannot be read from metrics source haproxy; gate on error-rate, or read latency from Prometheus")
    })
    return
  }
  if (metrics?.source !== 'prometheus') return
  if (!metrics.url) fail(at, 'expected url (the Prometheus server) for a Prometheus source')
  const queries = metrics.queries ?? {}
  const missing = new Map<MetricKind, number>()
  data.steps.forEach((step, index) => {
    for (const kind of metricsRead(step)) if (!queries[kind] && !missing.has(kind)) missing.set(kind, index)
  })
  for (const [kind, index] of missing) fail([...at, 'queries'], `expected a query for ${kind}: steps[${index}] reads it`)
}

type MetricKind = keyof NonNullable<NonNullable<RunbookData['targets']['metrics']>['queries']>

/** The metrics a step reads: its gate's, the headroom guard's demand, and what an approval shows. */
function metricsRead(step: StepData): MetricKind[] {
  switch (step.action) {
    case 'approve':
      return ['error-rate', 'request-rate']
    case 'cycle':
      return [...(step.gate ? [step.gate.metric] : []), ...(step.headroom === undefined ? [] : ['request-rate' as const])]
    case 'ramp':
    case 'check':
      return step.gate ? [step.gate.metric] : []
    default:
      return []
  }
}

function exceeds(batch: CountOrPercent, budget: CountOrPercent): boolean {
  if ('count' in batch && 'count' in budget) return batch.count > budget.count
  if ('percent' in batch && 'percent' in budget) return batch.percent > budget.percent
  return false // mixed units: checked against the group's size when the step runs
}

/** Turns a schedule into the list of percentages the ramp steps through. */
function expandSchedule(schedule: ScheduleData, path: Path, fail: (p: Path, m: string) => void): number[] {
  let steps: number[]
  if (Array.isArray(schedule)) {
    steps = schedule
  } else if ('linear' in schedule) {
    const {from, to, steps: n} = schedule.linear
    steps = Array.from({length: n}, (_, i) => from + ((to - from) * i) / (n - 1))
  } else {
    const {from, factor, to} = schedule.exponential
    // Returning here also keeps the loop below from multiplying zero for ever.
    if (from <= 0) {
      fail([...path, 'exponential', 'from'], `expected a start above 0 %, got ${from}`)
      return []
    }
    // Counted before any is made: a factor just above 1 would make billions.
    const count = to > from ? Math.ceil(Math.log(to / from) / Math.log(factor)) + 1 : 1
    if (count > limits.maxScheduleSteps) {
      fail([...path, 'exponential', 'factor'], `expected at most ${limits.maxScheduleSteps} steps, but a factor of ${factor} from ${from}% to ${to}% makes ${count}`)
      return []
    }
    steps = []
    for (let p = from; p < to; p *= factor) steps.push(p)
    steps.push(to)
  }
  steps.forEach((p, i) => {
    const at = Array.isArray(schedule) ? [...path, i] : path
    if (p > 100) fail(at, `expected a weight of at most 100%, got ${p}%`)
    if (p < 1) fail(at, `expected a weight of at least 1%, got ${p}%`)
  })
  // Route 53 weights are whole numbers; the ramped set gets p and the others share 100 − p.
  steps = steps.map((p) => Math.round(p))
  steps.forEach((p, i) => {
    const at = Array.isArray(schedule) ? [...path, i] : path
    if (i > 0 && p <= steps[i - 1]) fail(at, `expected each step above the one before, got ${p}% after ${steps[i - 1]}%`)
  })
  return steps
}
