import {InputError} from '../errors.js'
import {flagSite, type Path, type Problem, type ProblemSite} from '../input/problems.js'
import {schemaProblems} from '../input/schema-problems.js'
import {describeIssue, readInputText, specificIssue, YamlSource} from '../input/yaml-source.js'
import {actionNamed, actionOf, metricsRead, resolveStep, type Step} from '../actions/registry.js'
import {runbookSchema, type RunbookInput, type RunbookData} from './runbook-schema.js'
import type {GateData} from '../runbook/schema.js'
import {limits, maxSecondsText} from '../runbook/limits.js'
import type {Runbook} from './runbook.js'
import {gateDefaults, type Baseline, type Gate} from '../runbook/gate.js'
import {leastIntervals} from '../judge/counts.js'
import type {StepCommon} from '../runbook/step-common.js'
import {backendOf} from '../runbook/targets.js'

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

  /** The baseline a relative gate names: `stable` is the one other pool, so the runbook must have exactly two. */
  const resolveBaseline = (relativeTo: NonNullable<GateData['relativeTo']>, pool: string | undefined, path: Path): Baseline | undefined => {
    if (relativeTo === 'before') return 'before'
    if (pool === undefined) {
      fail(path, 'a gate relative to another pool compares its own pool with that one: give the gate a pool')
      return undefined
    }
    if (relativeTo === 'stable') {
      const others = [...pools].filter((p) => p !== pool)
      if (others.length === 1) return {pool: others[0]}
      fail(
        path,
        `relativeTo: stable is the one pool besides ${pool}, and the runbook has ${others.length === 0 ? 'none' : `${others.length} (${others.join(', ')})`}: name it, relativeTo: {pool: NAME}`,
      )
      return undefined
    }
    if (!pools.has(relativeTo.pool)) fail([...path, 'pool'], `no pool named "${relativeTo.pool}" in targets; pools are ${[...pools].join(', ') || 'none'}`)
    else if (relativeTo.pool === pool) fail([...path, 'pool'], `the baseline is the gate's own pool (${pool}): name the pool it is compared with`)
    return {pool: relativeTo.pool}
  }

  const resolveGate = (gate: GateData, path: Path): Gate => {
    const d = data.defaults.gate ?? {}
    const threshold = gate.threshold ?? d.threshold
    if (threshold === undefined) fail(path, `gate on ${gate.metric} has no threshold, and defaults.gate sets none`)
    if (!targets.metrics) fail(path, 'a gate needs targets.metrics to say where its metric comes from')
    const pool = gate.pool ?? d.pool
    if (pool !== undefined && !pools.has(pool)) fail([...path, 'pool'], `no pool named "${pool}" in targets; pools are ${[...pools].join(', ') || 'none'}`)
    const minRequests = gate.minRequests ?? d.minRequests
    const relativeTo = gate.relativeTo ?? d.relativeTo
    const compare = gate.compare ?? d.compare
    const baseline = relativeTo === undefined ? undefined : resolveBaseline(relativeTo, pool, [...path, 'relativeTo'])
    if (gate.metric === 'healthy-targets') {
      // A share of targets healthy is a count of capacity, not a sample of requests.
      if (minRequests !== undefined)
        fail([...path, 'minRequests'], 'minRequests counts requests, and healthy-targets measures targets: gate on error-rate or latency-p99')
      if (relativeTo !== undefined)
        fail([...path, 'relativeTo'], 'relativeTo compares request metrics, and healthy-targets measures targets: give it an absolute threshold')
    }
    if (compare !== undefined && relativeTo === undefined)
      fail([...path, 'compare'], 'compare says how a relative threshold is read, and the gate has no relativeTo')
    if (gate.metric === 'error-rate' && threshold !== undefined && threshold > 100 && compare !== 'ratio')
      fail([...path, 'threshold'], `expected an error rate in % (0–100), got ${threshold}`)
    if (gate.metric === 'healthy-targets' && threshold !== undefined && threshold > 100)
      fail([...path, 'threshold'], `expected a share of healthy targets in % (0–100), got ${threshold}`)
    const judge = gate.judge ?? d.judge ?? 'threshold'
    const consecutiveFailures = gate.consecutiveFailures ?? d.consecutiveFailures
    if (judge === 'counts') {
      // The counts judge weighs a pool's requests against another's over the same intervals.
      if (gate.metric !== 'error-rate') fail([...path, 'judge'], `judge: counts weighs requests and errors: it judges error-rate, not ${gate.metric}`)
      else if (baseline === undefined)
        fail(
          [...path, 'judge'],
          'judge: counts compares the pool with a baseline: give relativeTo: stable or {pool: NAME} (another pool over the same intervals), or before (the pool over its window before the change)',
        )
      if (compare === 'ratio') fail([...path, 'compare'], 'judge: counts reads its threshold as a margin in points: leave compare out, or points')
      if (minRequests !== undefined) fail([...path, 'minRequests'], 'judge: counts weighs every request, however few: minRequests is for the threshold judge')
      if (gate.window !== undefined && baseline !== 'before')
        fail(
          [...path, 'window'],
          'judge: counts reads each interval once, from the last look to this one: leave window out (with relativeTo: before it is how long the pool is watched before the change)',
        )
      const watched = gate.window ?? d.window ?? gateDefaults.window
      const every = gate.interval ?? d.interval ?? gateDefaults.interval
      if (baseline === 'before' && watched < leastIntervals * every)
        fail(
          [...path, gate.window === undefined ? 'interval' : 'window'],
          `judge: counts relative to before watches the pool for its window before the change, one look each interval, and needs ${leastIntervals} looks to tell how much they vary: expected a window of at least ${leastIntervals} × ${every} s = ${leastIntervals * every} s, got ${watched} s`,
        )
    } else if (gate.confidence !== undefined)
      fail([...path, 'confidence'], 'confidence is how sure the counts judge must be: give judge: counts, or leave it out')
    const resolved: Gate = {
      metric: gate.metric,
      threshold: threshold ?? Number.NaN,
      window: gate.window ?? d.window ?? gateDefaults.window,
      interval: gate.interval ?? d.interval ?? gateDefaults.interval,
      // With a limit in a row and none in all, the limit in a row is the one.
      failureLimit: gate.failureLimit ?? d.failureLimit ?? (consecutiveFailures === undefined ? gateDefaults.failureLimit : limits.maxVerdicts),
      ...(consecutiveFailures === undefined ? {} : {consecutiveFailures}),
      judge,
      confidence: gate.confidence ?? d.confidence ?? gateDefaults.confidence,
      inconclusiveLimit: gate.inconclusiveLimit ?? d.inconclusiveLimit ?? gateDefaults.inconclusiveLimit,
      successes: gate.successes ?? d.successes ?? gateDefaults.successes,
      ...(pool === undefined ? {} : {pool}),
      ...(minRequests === undefined ? {} : {minRequests}),
      ...(baseline === undefined ? {} : {baseline, compare: compare ?? 'points'}),
    }
    // A window shorter than the interval leaves seconds no verdict ever looks at.
    if (resolved.window < resolved.interval)
      fail(
        [...path, gate.window === undefined ? 'interval' : 'window'],
        `expected a window of at least the interval (${resolved.interval} s), got ${resolved.window} s`,
      )
    if (resolved.successes * resolved.interval > limits.maxSeconds)
      fail(
        [...path, gate.successes === undefined ? 'interval' : 'successes'],
        `expected successes × interval of at most ${maxSecondsText}, got ${resolved.successes} × ${resolved.interval} s`,
      )
    return resolved
  }

  checkControlPlane(data, fail)
  checkMetricsSource(data, fail)
  for (const pool of Object.keys(targets.capacityPerTarget ?? {}))
    if (!pools.has(pool)) fail(['targets', 'capacityPerTarget', pool], `no pool named "${pool}" in targets; pools are ${[...pools].join(', ') || 'none'}`)

  const steps = data.steps.map((raw, index): Step => {
    const path = ['steps', index]
    const common: StepCommon = {
      index,
      // Set below, once every step is resolved: a title can name what resolving worked out.
      title: '',
      onFailure: raw.onFailure ?? actionNamed(raw.action).defaultOnFailure,
      ...(raw.timeout === undefined ? {} : {timeout: raw.timeout}),
    }
    return resolveStep(raw, {common, path, fail, gate: resolveGate, backend, targets, defaults: data.defaults})
  })
  if (problems.length > 0) throw site.error(problems)
  for (const step of steps) step.title = data.steps[step.index].name ?? actionOf(step).title(step)

  return {file, name: data.name, description: data.description, targets, rehearsal: data.rehearsal, steps, locate: (path) => site.locate(path)}
}

/**
 * One control plane per runbook: one backend family's (HAProxy, or AWS). A run that drove both would lock, confirm,
 * preflight and roll back across two systems with no common view of either. Prometheus metrics
 * go with either (HAProxy's exporter, scraped by a Prometheus server).
 */
function checkControlPlane(data: RunbookData, fail: (path: Path, message: string) => void): void {
  const {haproxy, metrics} = data.targets
  if (metrics?.source === 'haproxy' && !haproxy)
    fail(
      ['targets', 'metrics', 'source'],
      "metrics source haproxy reads HAProxy's counters over its Runtime API, and the runbook has no targets.haproxy to say where that is",
    )
  // Whichever family the targets name says what of them it refuses (another family's fields beside its own).
  for (const problem of backendOf(data.targets).problems()) fail(problem.path, problem.message)
}

/** What the metrics source needs to read every metric the runbook's steps read, checked before anything runs live. */
function checkMetricsSource(data: RunbookData, fail: (path: Path, message: string) => void): void {
  const metrics = data.targets.metrics
  const at = ['targets', 'metrics']
  if (metrics?.source === 'cloudwatch' && !metrics.loadBalancer) fail(at, 'expected loadBalancer (the app/NAME/ID dimension) for CloudWatch gates')
  if (metrics?.source === 'haproxy') {
    data.steps.forEach((step, index) => {
      if ('gate' in step && step.gate?.metric === 'latency-p99')
        fail(
          ['steps', index, 'gate', 'metric'],
          "HAProxy's stats have no latency percentiles (only an average of the last 1024 requests), so a latency-p99 gate cannot be read from metrics source haproxy; gate on error-rate, or read latency from Prometheus",
        )
    })
    return
  }
  if (metrics?.source !== 'prometheus') return
  if (!metrics.url) fail(at, 'expected url (the Prometheus server) for a Prometheus source')
  const queries = metrics.queries ?? {}
  const missing = new Map<MetricKind, number>()
  data.steps.forEach((step, index) => {
    for (const kind of metricsRead(step)) if (!queries[kind] && !missing.has(kind)) missing.set(kind, index)
    // Prometheus counts a window's requests only as its request rate times the window.
    const gate = 'gate' in step ? step.gate : undefined
    const counting = gate && ((gate.minRequests ?? data.defaults.gate?.minRequests) !== undefined || (gate.judge ?? data.defaults.gate?.judge) === 'counts')
    if (counting && !queries['request-rate'] && !missing.has('request-rate')) missing.set('request-rate', index)
  })
  for (const [kind, index] of missing) fail([...at, 'queries'], `expected a query for ${kind}: steps[${index}] reads it`)
}

type MetricKind = keyof NonNullable<NonNullable<RunbookData['targets']['metrics']>['queries']>
