// A fourth backend family, in memory: its face (what a runbook's targets.memory mean) and its
// factory (the ports a live run drives), in its own folder. Listed with addFamily
// (src/wiring/families.ts), it is all a runbook needs to plan, run live and be rehearsed on it.
import type {Backend, BackendFamily, BackendFace, BackendProblem} from '../../../src/ports/backend.js'
import type {Restriction, RestrictionPort, WeightMap, WeightsPort} from '../../../src/ports/control-plane.js'
import {schemaProblems} from '../../../src/input/schema-problems.js'
import {YamlSource} from '../../../src/input/yaml-source.js'
import {checkRunbook} from '../../../src/loader/load-runbook.js'
import type {Runbook} from '../../../src/loader/runbook.js'
import {runbookSchema, type RunbookData} from '../../../src/loader/runbook-schema.js'
import {FakeGroup} from '../../helpers/fakes.js'

/** What a runbook's targets say of an in-memory load balancer: its name, and each pool's servers. */
export interface MemoryTargets {
  memory?: {name: string; pools: Record<string, number>}
  dns?: unknown
  targetGroups?: unknown
  listener?: unknown
  haproxy?: unknown
}

/** The split between the pools: every request follows a change at once (a TTL of 0). */
class MemorySplit implements WeightsPort {
  readonly label: string
  constructor(
    name: string,
    public weights: WeightMap,
  ) {
    this.label = `memory ${name} split`
  }
  async ttl(): Promise<number> {
    return 0
  }
  async readWeights(): Promise<WeightMap> {
    return {...this.weights}
  }
  async applyWeights(weights: WeightMap): Promise<void> {
    this.weights = {...this.weights, ...weights}
  }
}

/** Where traffic types are turned away; `ever` keeps every type it turned away. */
class MemoryGate implements RestrictionPort {
  readonly label: string
  rules: Restriction[] = []
  ever: string[] = []
  constructor(name: string) {
    this.label = `memory ${name} gate`
  }
  async list(): Promise<Restriction[]> {
    return [...this.rules]
  }
  async add(restriction: Restriction): Promise<void> {
    this.rules = [...this.rules.filter((r) => r.type !== restriction.type), restriction]
    this.ever.push(restriction.type)
  }
  async remove(type: string): Promise<boolean> {
    const before = this.rules.length
    this.rules = this.rules.filter((r) => r.type !== type)
    return this.rules.length < before
  }
}

/** What one of the family's load balancers holds, kept by name for a test to look at after a run; the first pool starts with all the traffic. */
export class MemoryWorld {
  readonly split: MemorySplit
  readonly pools: Map<string, FakeGroup>
  readonly gate: MemoryGate
  constructor(name: string, pools: Record<string, number>) {
    const names = Object.keys(pools)
    this.split = new MemorySplit(name, Object.fromEntries(names.map((pool, k) => [pool, k === 0 ? 100 : 0])))
    this.gate = new MemoryGate(name)
    this.pools = new Map(
      names.map((pool) => [
        pool,
        new FakeGroup(
          pool,
          Array.from({length: pools[pool]}, (_, k) => `${pool}-${k}`),
        ),
      ]),
    )
  }
}

export const worlds = new Map<string, MemoryWorld>()

function memoryBackend(targets: MemoryTargets): Backend {
  const m = targets.memory!
  const pools = Object.keys(m.pools)
  const lock = (what: string) => [`memory:${m.name}/${what}`]
  return {
    family: 'memory',
    name: `memory ${m.name}`,
    pools: new Set(pools),
    targetPools: pools,
    weightedSets: Object.fromEntries(pools.map((pool) => [pool, pool])),
    sets: {noun: 'pool', plural: 'pools', at: 'targets.memory.pools'},
    weightsLabel: `memory ${m.name} split`,
    restrictionsLabel: `memory ${m.name} gate`,
    poolLabel: (pool) => (m.pools[pool] === undefined ? undefined : `memory ${m.name} pool ${pool}`),
    poolPath: (pool) => ['targets', 'memory', 'pools', pool],
    setPath: (set) => ['targets', 'memory', 'pools', set],
    poolsMayBeSorry: false,
    poolInPlan: (pool) => `${pool} (memory ${m.name} pool ${pool})`,
    actsThroughAws: false,
    reachedWithoutIam: 'in memory',
    locks: {weights: () => lock('split'), pool: (pool) => lock(`pool/${pool}`), restrictions: () => lock('gate')},
    iam: {weights: () => [], pool: () => [], restart: () => [], restrict: () => [], lift: () => [], read: () => []},
    poolSplit: (_rule, _path) => ({at: `memory:${m.name}`, label: `memory ${m.name} split`, pools, locks: lock('split'), iam: []}),
    problems(): BackendProblem[] {
      const others = (['dns', 'targetGroups', 'listener', 'haproxy'] as const).filter((key) => targets[key] !== undefined)
      return others.map((key) => ({path: ['targets', key], message: `targets.${key} and targets.memory: one runbook drives one control plane`}))
    },
    stepProblems: () => [],
  }
}

export const memoryFace: BackendFace<MemoryTargets> = {
  family: 'memory',
  names: (targets) => targets.memory !== undefined,
  backend: memoryBackend,
}

export const memoryFamily: BackendFamily<MemoryTargets, unknown> = {
  face: memoryFace,
  controlPlane(targets) {
    const m = targets.memory!
    const world = worlds.get(m.name) ?? new MemoryWorld(m.name, m.pools)
    worlds.set(m.name, world)
    return {
      weights: world.split,
      poolWeights: () => world.split,
      pools: new Map(world.pools),
      restrictions: world.gate,
      close: () => undefined,
    }
  },
}

/**
 * A runbook whose targets name the in-memory family. The runbook schema is the user's contract
 * (`sluice schema`, runbook.schema.json) and lists the shipped families' fields only, so
 * targets.memory is taken out for the schema's check and put back for the checks that follow
 * (src/loader/load-runbook.ts, checkRunbook), which read it through the family's face.
 */
export function memoryRunbook(file: string, text: string): Runbook {
  const source = YamlSource.parse(file, text)
  const data = source.data() as {targets: Record<string, unknown>}
  const {memory, ...others} = data.targets
  const checked = schemaProblems(runbookSchema, {...data, targets: others})
  if (!checked.success) throw source.error(checked.problems)
  const withMemory = {...checked.data, targets: {...checked.data.targets, memory}} as RunbookData
  return {...checkRunbook(withMemory, file, source), source: {kind: 'file', text}}
}
