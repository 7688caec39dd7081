import type {FleetPoolConfig} from '../../src/drill/fleet.js'

/** A warm pool of plain servers that queue deep and never churn: each test states only what it is about. */
export function fleetPool(overrides: Partial<FleetPoolConfig> = {}): FleetPoolConfig {
  return {
    name: 'web',
    servers: 1,
    capacity: 1000,
    serviceTime: 0.005,
    threads: 100,
    queueLimit: 1000,
    coldFactor: 1,
    warmupSeconds: 0,
    restartSeconds: 1,
    handshakeCost: 1,
    ...overrides,
  }
}
