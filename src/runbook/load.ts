import {readFileSync} from 'node:fs'
import {InputError} from '../errors.js'
import {flagSite, type Path, type Problem, type ProblemSite} from '../input/problems.js'
import {schemaProblems} from '../input/schema-problems.js'
import {describeIssue, YamlSource} from '../input/yaml-source.js'
import {runbookSchema, type GateData, type RunbookInput, type ScheduleData, type RunbookData, type StepData} from './schema.js'
import {actionNamed, actionOf} from '../actions/registry.js'
import {describeCount, type CountOrPercent} from './units.js'
import {defaultBake, gateDefaults, type Gate, type Runbook, type Step, type StepCommon} from './runbook.js'

export function loadRunbookFile(file: string): Runbook {
  let text: string
  try {
    text = readFileSync(file, 'utf8')
  } catch (error) {
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
    const issue = result.error.issues[0]
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
  const pools = new Set([...Object.values(targets.dns?.sets ?? {}), ...Object.keys(targets.targetGroups ?? {})])

  const resolveGate = (gate: GateData, path: Path): Gate => {
    const d = data.defaults.gate ?? {}
    const threshold = gate.threshold ?? d.threshold
    if (threshold === undefined) fail(path, `gate on ${gate.metric} has no threshold, and defaults.gate sets none`)
    if (!targets.metrics) fail(path, 'a gate needs targets.metrics to say where its metric comes from')
    const pool = gate.pool ?? d.pool
    if (pool !== undefined && !pools.has(pool)) fail([...path, 'pool'], `no pool named "${pool}" in targets; pools are ${[...pools].join(', ') || 'none'}`)
    if (gate.metric === 'error-rate' && threshold !== undefined && threshold > 100) fail([...path, 'threshold'], `expected an error rate in % (0–100), got ${threshold}`)
    if (gate.metric === 'healthy-targets' && threshold !== undefined && threshold > 100) fail([...path, 'threshold'], `expected a share of healthy targets in % (0–100), got ${threshold}`)
    return {
      metric: gate.metric,
      threshold: threshold ?? Number.NaN,
      window: gate.window ?? d.window ?? gateDefaults.window,
      interval: gate.interval ?? d.interval ?? gateDefaults.interval,
      failureLimit: gate.failureLimit ?? d.failureLimit ?? gateDefaults.failureLimit,
      inconclusiveLimit: gate.inconclusiveLimit ?? d.inconclusiveLimit ?? gateDefaults.inconclusiveLimit,
      successes: gate.successes ?? d.successes ?? gateDefaults.successes,
      ...(pool === undefined ? {} : {pool}),
    }
  }

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
        if (!targets.listener) fail(path, `a ${raw.action} step needs targets.listener: the load balancer listener its rules go on`)
        return {...raw, ...common}
      }
      case 'cycle': {
        if (!targets.targetGroups?.[raw.pool])
          fail([...path, 'pool'], `no target group for pool "${raw.pool}" in targets.targetGroups; it has ${Object.keys(targets.targetGroups ?? {}).join(', ') || 'none'}`)
        if (raw.budget && exceeds(raw.batch, raw.budget))
          fail([...path, 'batch'], `a batch of ${describeCount(raw.batch)} is larger than the disruption budget of ${describeCount(raw.budget)}`)
        if (raw.headroom !== undefined && raw.capacityPerTarget === undefined)
          fail([...path, 'headroom'], 'a headroom guard needs capacityPerTarget (requests per second one target can serve)')
        const gate = raw.gate ? resolveGate(raw.gate, [...path, 'gate']) : undefined
        return {...raw, ...common, gate, bake: raw.bake ?? data.defaults.bake ?? (gate ? gate.window : 0)}
      }
      case 'ramp': {
        const dns = targets.dns
        if (!dns) fail(path, 'a ramp step needs targets.dns: the weighted record it ramps')
        else if (!(raw.set in dns.sets)) fail([...path, 'set'], `no weighted set "${raw.set}" in targets.dns.sets; it has ${Object.keys(dns.sets).join(', ')}`)
        else if (Object.keys(dns.sets).length < 2) fail([...path, 'set'], 'a ramp moves traffic between weighted sets: targets.dns.sets needs at least two')
        const schedule = expandSchedule(raw.schedule, [...path, 'schedule'], fail)
        const bake = raw.bake ?? data.defaults.bake ?? defaultBake
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
