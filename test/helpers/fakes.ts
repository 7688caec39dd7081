import type {
  Clock,
  ControlPlane,
  WeightsPort,
  FreezePort,
  FreezeRecord,
  HookPort,
  MetricKind,
  Reading,
  MetricsPort,
  Restriction,
  Target,
  PoolPort,
  RestrictionPort,
  WeightMap,
} from '../../src/ports/control-plane.js'
import {RefusedError} from '../../src/errors.js'
import {type EngineIO, type RunEvent} from '../../src/ports/io.js'
import type {Runbook} from '../../src/loader/runbook.js'
import {parseRunbook} from '../../src/loader/load-runbook.js'

/** Virtual time that moves only when the code under test sleeps. */
export class FakeClock implements Clock {
  t = 0
  now(): number {
    return this.t
  }
  async sleep(seconds: number, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return
    this.t += seconds
    await Promise.resolve()
  }
}

export class FakeDns implements WeightsPort {
  readonly label = 'Z1 app.example.com. A'
  applied: WeightMap[] = []
  constructor(
    public weights: WeightMap,
    private readonly ttlSeconds = 60,
  ) {}
  async ttl(): Promise<number> {
    return this.ttlSeconds
  }
  async readWeights(): Promise<WeightMap> {
    return {...this.weights}
  }
  async applyWeights(weights: WeightMap): Promise<void> {
    this.applied.push({...weights})
    this.weights = {...this.weights, ...weights}
  }
}

export class FakeMetrics implements MetricsPort {
  readonly label = 'fake metrics'
  reads: Array<{kind: MetricKind; pool?: string}> = []
  /** `value` gives a bare number (a source that does not count requests) or a whole reading. */
  constructor(private readonly value: (kind: MetricKind, pool?: string) => number | null | Reading) {}
  async read(kind: MetricKind, _window: number, pool?: string): Promise<Reading> {
    this.reads.push({kind, pool})
    const value = this.value(kind, pool)
    return typeof value === 'number' || value === null ? {value, requests: null} : value
  }
}

/**
 * A request rate served as the weights set, as a load balancer serves its split: each pool its
 * share of `total` rps (a pool's share by its own key), `total` over all. For fakes of metrics
 * whose runbook counts every pool, so a ramp's measured split sees its change served.
 */
export function servedAsSet(weights: WeightMap, pool: string | undefined, total: number): number {
  if (pool === undefined) return total
  const sum = Object.values(weights).reduce((a, b) => a + b, 0)
  return sum > 0 ? (total * (weights[pool] ?? 0)) / sum : 0
}

export class FakeGroup implements PoolPort {
  readonly label: string
  registered: Set<string>
  deregistrations: string[][] = []
  registrations: string[][] = []
  /** Targets that fail health checks whatever happens. */
  sick = new Set<string>()
  /** Deregistered targets still listed as draining, as ELBv2 keeps them for the deregistration delay. */
  draining = new Set<string>()
  /** Whether deregistered targets stay draining until waitDrained (ELBv2) rather than vanish at once (moto). */
  keepDraining = false
  drainWaits: string[][] = []
  slow = 0
  constructor(
    readonly name: string,
    public ids: string[],
  ) {
    this.label = `target group ${name}`
    this.registered = new Set(ids)
  }
  /** Targets in slow start, with the share of their weight the balancer gives them. */
  warmth = new Map<string, number>()
  async targets(): Promise<Target[]> {
    return this.ids.map((id) => ({
      id,
      targetId: id,
      health: this.draining.has(id) ? 'draining' : !this.registered.has(id) ? 'unused' : this.sick.has(id) ? 'unhealthy' : 'healthy',
      ...(this.warmth.has(id) ? {warmth: this.warmth.get(id)!} : {}),
    }))
  }
  async deregister(ids: string[]): Promise<void> {
    this.deregistrations.push(ids)
    for (const id of ids) {
      if (this.keepDraining && this.registered.has(id)) this.draining.add(id)
      this.registered.delete(id)
    }
  }
  async waitDrained(ids: string[]): Promise<boolean> {
    this.drainWaits.push(ids)
    for (const id of ids) this.draining.delete(id)
    return true
  }
  async register(ids: string[]): Promise<void> {
    this.registrations.push(ids)
    for (const id of ids) {
      this.draining.delete(id)
      this.registered.add(id)
    }
  }
  async waitHealthy(ids: string[]): Promise<boolean> {
    return ids.every((id) => !this.sick.has(id))
  }
  async slowStart(): Promise<number> {
    return this.slow
  }
  async setSlowStart(seconds: number): Promise<void> {
    this.slow = seconds
  }
  failover: number | null = null
  async failoverPercent(): Promise<number | null> {
    return this.failover
  }
  async setFailoverPercent(percent: number | null): Promise<void> {
    this.failover = percent
  }
}

export class FakeRules implements RestrictionPort {
  readonly label = 'listener L1'
  rules: Restriction[] = []
  async list(): Promise<Restriction[]> {
    return [...this.rules]
  }
  async add(r: Restriction): Promise<void> {
    this.rules.push(r)
  }
  async remove(type: string): Promise<boolean> {
    const before = this.rules.length
    this.rules = this.rules.filter((r) => r.type !== type)
    return this.rules.length < before
  }
}

export class FakeFreeze implements FreezePort {
  record: FreezeRecord | null = null
  async get() {
    return this.record
  }
  async set(r: FreezeRecord) {
    this.record = r
  }
  async clear() {
    this.record = null
  }
}

export class FakeHooks implements HookPort {
  runs: Array<{kind: string; id: string}> = []
  failFor = new Set<string>()
  async run(kind: 'restart' | 'remediate', _hook: unknown, target: Target): Promise<void> {
    this.runs.push({kind, id: target.id})
    if (this.failFor.has(target.id)) throw new Error(`${kind} exited 1`)
  }
}

/** Records every event; answers questions as told, or refuses like a run without a TTY. */
export class RecordingIO implements EngineIO {
  events: RunEvent[] = []
  questions: string[] = []
  /** What each question was asked with, in order. */
  contexts: string[][] = []
  constructor(private readonly answer: boolean | 'no-tty' = 'no-tty') {}
  notify(event: RunEvent): void {
    this.events.push(event)
  }
  async confirm(question: string, context: string[] = []): Promise<boolean> {
    this.questions.push(question)
    this.contexts.push(context)
    if (this.answer === 'no-tty') throw new RefusedError(`${question} needs an answer, but this run is not interactive; pass --yes to approve`)
    return this.answer
  }
  of<T extends RunEvent['type']>(type: T): Array<Extract<RunEvent, {type: T}>> {
    return this.events.filter((e): e is Extract<RunEvent, {type: T}> => e.type === type)
  }
}

export function control(parts: Partial<ControlPlane> & {clock?: FakeClock}): ControlPlane {
  return {
    clock: parts.clock ?? new FakeClock(),
    pools: parts.pools ?? new Map(),
    freeze: parts.freeze ?? new FakeFreeze(),
    hooks: parts.hooks ?? new FakeHooks(),
    operator: 'tester',
    runId: 'test-run',
    ...parts,
  }
}

const targets = `targets:
  dns:
    zone: Z1
    record: app.example.com.
    ttl: 60
    sets: {blue: blue, green: green}
  targetGroups:
    blue: arn:blue
  listener: arn:listener
  metrics:
    source: cloudwatch
    loadBalancer: app/test/1
`

/** A runbook from a YAML list of steps, with the fake targets above. */
export function runbook(steps: string, extra = ''): Runbook {
  return parseRunbook('test.yaml', `name: test\n${targets}${extra}steps:\n${steps}`)
}
