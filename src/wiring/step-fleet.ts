import {poolSchema, scenarioSchema, type Scenario} from '../sim/scenario/schema.js'

// A single action rehearsed from flags with no --scenario names what it acts on (a set, a pool, a
// traffic type) and no fleet has it: the default scenario's pool is called something else, has no
// second set to move traffic from, has one traffic type. The rehearsal fleet is the default one
// made to have what the flags name, and the report says what was made.

/** What a single action's flags name, which its rehearsal fleet must have. */
export interface StepNeeds {
  /** A weighted set traffic moves onto (ramp --set): a pool of servers, with traffic parked elsewhere. */
  set?: string
  /** A pool acted on (cycle --pool, a gate's --gate-pool). */
  pools?: string[]
  /** A traffic type restricted or let back (restrict, lift --type). */
  type?: string
  /** The type is let back (lift): it is turned away when the rehearsal starts. */
  restricted?: boolean
}

/** The share of demand a traffic type the scenario lacks is given: the flags do not say how much of it there is. */
export const addedTypeShare = 0.2

/** Where a ramp's traffic is parked when the flags name only the set it moves onto. */
const parkedPool = 'maintenance'

/** The base scenario with what the flags name, and a sentence per thing it made; the base as it is when it has them all. */
export function fleetForStep(base: Scenario, needs: StepNeeds): {scenario: Scenario; made: string[]} {
  const made: string[] = []
  const servers = base.pools.filter((p) => p.kind === 'servers')
  const names = new Set(base.pools.map((p) => p.name))
  const wanted = [...new Set([...(needs.set ? [needs.set] : []), ...(needs.pools ?? [])])].filter((name) => !names.has(name))
  let pools = base.pools
  let weights = base.dns.weights
  let faults = base.faults
  // One pool of servers, called what the flags call it: every fault of the base is on it.
  if (wanted.length === 1 && servers.length === 1) {
    const [name] = wanted
    const from = servers[0].name
    pools = pools.map((p) => (p.name === from ? {...p, name} : p))
    faults = faults.map((f) => ('pool' in f && f.pool === from ? {...f, pool: name} : f))
    if (weights?.[from] !== undefined) weights = Object.fromEntries(Object.entries(weights).map(([k, w]) => [k === from ? name : k, w]))
    made.push(`${base.name}'s pool ${from} (${servers[0].servers} servers of ${servers[0].capacity} rps) is called ${name}`)
  } else if (wanted.length > 0) {
    const template = servers[0]
    pools = [...pools, ...wanted.map((name) => ({...template, name}))]
    made.push(`pools ${wanted.join(', ')} added, each as ${template.name} (${template.servers} servers of ${template.capacity} rps)`)
  }
  if (needs.set && pools.length === 1) {
    const parked = needs.set === parkedPool ? 'parked' : parkedPool
    pools = [...pools, sorryPool(parked)]
    weights = {[needs.set]: 0, [parked]: 100}
    made.push(`traffic starts parked on a sorry pool ${parked} (weights ${needs.set}=0 ${parked}=100), for the ramp to move onto ${needs.set}`)
  }
  let demand = base.demand
  let restrictions = base.restrictions
  if (needs.type && !(needs.type in base.demand.types)) {
    const rest = 1 - addedTypeShare
    const types = {...Object.fromEntries(Object.entries(base.demand.types).map(([k, v]) => [k, v * rest])), [needs.type]: addedTypeShare}
    demand = {...demand, types}
    made.push(`a traffic type ${needs.type} added as ${addedTypeShare * 100}% of demand (${describeTypes(types)})`)
  }
  if (needs.type && needs.restricted && !restrictions.some((r) => r.type === needs.type)) {
    restrictions = [...restrictions, {type: needs.type, share: 100, retryAfter: 120, from: 0}]
    made.push(`${needs.type} is turned away from the start (Retry-After 120 s), for the lift to let back`)
  }
  if (made.length === 0) return {scenario: base, made}
  // Checked as a scenario file is: what is made must be a fleet the simulator takes.
  const scenario = scenarioSchema.parse({...base, pools, faults, demand, restrictions, dns: {...base.dns, ...(weights ? {weights} : {})}})
  return {scenario, made}
}

/** A pool that answers by itself (a maintenance page), its other fields the schema's defaults. */
const sorryPool = (name: string): Scenario['pools'][number] => poolSchema.parse({name, kind: 'sorry'})

const describeTypes = (types: Record<string, number>): string =>
  Object.entries(types)
    .map(([k, v]) => `${k} ${Math.round(v * 1000) / 10}%`)
    .join(', ')
