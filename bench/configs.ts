import type {FleetConfig} from '../src/sim/config.js'

/**
 * 10,000 servers for an hour of virtual time with every mechanism the simulator has switched on.
 * `scale` shrinks the servers, the demand and the broken count together (the golden test runs it at
 * a tenth of the size), keeping the same mix of mechanisms.
 */
export function everythingOn(scale = 1): FleetConfig {
  const pool = {
    kind: 'servers' as const,
    capacity: 100,
    capacitySpread: 0.2,
    serviceSpread: 1,
    slowMinority: null,
    balance: 'round-robin' as const,
    collapse: 1,
    handshakeCost: 3,
    connectionChurn: 0.01,
    coldFactor: 0.5,
    warmupSeconds: 60,
    threads: 200,
    serviceTime: 0.1,
    restartSeconds: 30,
    queueSeconds: null,
  }
  return {
    model: 'queueing',
    duration: 3600,
    tick: 1,
    seed: 42,
    pools: [
      {...pool, name: 'east', servers: Math.round(6000 * scale)},
      {...pool, name: 'west', servers: Math.round(4000 * scale)},
      {...pool, name: 'sorry', kind: 'sorry', servers: 0},
    ],
    dns: {ttl: 60, weights: {east: 60, west: 40, sorry: 0}},
    healthCheck: {interval: 10, baseEjection: 30, maxEjection: 300},
    clients: {
      attempts: 3,
      timeout: 5,
      backoffBase: 0.5,
      backoffMax: 20,
      retryBudget: 0.1,
      budgetWindow: 10,
      honourRetryAfter: true,
      retryAfter: 5,
      thinkTime: 1,
    },
    demand: {
      curve: [
        [0, 600_000 * scale],
        [1200, 800_000 * scale],
        [2400, 750_000 * scale],
        [3600, 700_000 * scale],
      ],
      types: [
        {name: 'interactive', share: 0.7},
        {name: 'sync', share: 0.25},
        {name: 'lookup', share: 0.05},
      ],
      arrivals: 'poisson',
    },
    faults: [
      {kind: 'broken', pool: 'east', servers: Math.round(1800 * scale), from: 600, to: 1500, mode: 'hang'},
      {kind: 'thread-hold', pool: 'west', type: 'lookup', holdSeconds: 30, release: 'restart', from: 900, to: 2000},
      {kind: 'metadata-outage', pool: 'east', from: 2400, to: 2700, lookupCapacity: 50_000 * scale},
    ],
    restrictions: [],
    policy: {maxEjectionPercent: 33, panicThreshold: 50, shed: true, slowStart: 60, slowStartMinWeightPercent: 10},
  }
}
