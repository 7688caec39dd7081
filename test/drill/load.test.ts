import http from 'node:http'
import {afterEach, describe, expect, it} from 'vitest'
import {startFleet, type RunningFleet} from '../../src/drill/fleet.js'
import {RetryBudget, backoffSeconds, errorOutcome, retryAfterSeconds, startLoad, type LoadClients, type LoadConfig} from '../../src/drill/load-generator.js'
import {rateAt} from '../../src/sim/curve.js'
import {fleetPool} from './pools.js'

const clients: LoadClients = {attempts: 1, timeout: 2, backoffBase: 0, backoffMax: 0, retryBudget: null, budgetWindow: 10, honourRetryAfter: true}

let fleet: RunningFleet | null = null
let stub: http.Server | null = null
afterEach(async () => {
  await fleet?.stop()
  fleet = null
  if (stub) {
    stub.closeAllConnections()
    await new Promise<void>((resolve) => stub!.close(() => resolve()))
    stub = null
  }
})

function config(port: number, overrides: Partial<LoadConfig>): LoadConfig {
  return {
    target: {host: '127.0.0.1', port},
    curve: [[0, 100]],
    types: [{name: 'all', share: 1}],
    clients,
    duration: 1,
    bucketSeconds: 0.25,
    arrivals: 'even',
    seed: 7,
    ...overrides,
  }
}

const sum = (xs: number[], bucketSeconds: number) => xs.reduce((a, b) => a + b, 0) * bucketSeconds

/** A stub backend that answers every request with `status` (and its headers) and logs arrival times in ms. */
async function stubServer(status: number, headers: Record<string, string> = {}): Promise<{port: number; arrivals: number[]; types: string[]}> {
  const arrivals: number[] = []
  const types: string[] = []
  stub = http.createServer((req, res) => {
    arrivals.push(performance.now())
    types.push(String(req.headers['x-sluice-type']))
    res.writeHead(status, headers)
    res.end()
  })
  await new Promise<void>((resolve) => stub!.listen(0, '127.0.0.1', resolve))
  return {port: (stub.address() as {port: number}).port, arrivals, types}
}

describe('the open-loop load generator', () => {
  it('serves the demand from a healthy server and records it per bucket under the simulator names', async () => {
    fleet = await startFleet({
      pools: [fleetPool()],
    })
    const record = await startLoad(config(fleet.pools[0].ports[0], {curve: [[0, 200]], duration: 1})).done
    const demand = sum(record.series.demand, record.bucketSeconds)
    expect(demand).toBeGreaterThan(180)
    expect(demand).toBeLessThan(220)
    expect(sum(record.series.served, record.bucketSeconds)).toBe(demand)
    expect(sum(record.series.offered, record.bucketSeconds)).toBe(demand)
    expect(sum(record.series.failed, record.bucketSeconds)).toBe(0)
    expect(record.t.slice(0, 4)).toEqual([0, 0.25, 0.5, 0.75])
  })

  it('keeps its arrival rate when the server stalls: arrivals do not wait for answers', async () => {
    fleet = await startFleet({
      pools: [fleetPool()],
    })
    await fleet.command({op: 'fault', pool: 'web', mode: 'hang'})
    const load = startLoad(config(fleet.pools[0].ports[0], {curve: [[0, 200]], duration: 1.5, clients: {...clients, timeout: 10}, arrivals: 'poisson'}))
    await new Promise((resolve) => setTimeout(resolve, 1700))
    const record = await load.stop()
    const offered = sum(record.series.offered, record.bucketSeconds)
    // 300 arrivals expected at 200 rps for 1.5 s; none answered, none given up. A closed loop would
    // have sent one request per connection and waited.
    expect(offered).toBeGreaterThan(220)
    expect(offered).toBeLessThan(380)
    expect(sum(record.series.served, record.bucketSeconds)).toBe(0)
    expect(record.inFlightAtStop).toBe(offered)
    // It keeps sending through the run although nothing is answered: the second half of the run
    // sends about as much as the first (buckets are coarse, so a stalled event loop only shifts arrivals).
    const firstHalf = sum(record.series.offered.slice(0, 3), record.bucketSeconds)
    const secondHalf = sum(record.series.offered.slice(3), record.bucketSeconds)
    expect(secondHalf).toBeGreaterThan(0.5 * firstHalf)
    expect(firstHalf).toBeGreaterThan(0.5 * secondHalf)
  })

  it('stop ends arrivals and retries and closes every connection it opened', async () => {
    fleet = await startFleet({
      pools: [fleetPool()],
    })
    await fleet.command({op: 'fault', pool: 'web', mode: 'hang'})
    const load = startLoad(config(fleet.pools[0].ports[0], {curve: [[0, 100]], duration: 10, clients: {...clients, timeout: 10, attempts: 3}}))
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(fleet.state().web[0].connections).toBeGreaterThan(10)
    const record = await load.stop()
    expect(record.inFlightAtStop).toBeGreaterThan(10)
    const sent = sum(record.series.offered, record.bucketSeconds)
    await new Promise((resolve) => setTimeout(resolve, 300))
    // The hung server sees its connections close, and nothing more arrives.
    expect(fleet.state().web[0].connections).toBe(0)
    expect(sum(load.snapshot().series.offered, record.bucketSeconds)).toBe(sent)
    expect(await load.done).toBe(record)
  })

  it('follows a demand curve', async () => {
    const {port} = await stubServer(200)
    const record = await startLoad(
      config(port, {
        curve: [
          [0, 0],
          [1, 400],
        ],
        duration: 1,
        bucketSeconds: 0.5,
      }),
    ).done
    const [first, second] = record.series.demand
    // Integral of the ramp: 50 in the first half second, 150 in the second.
    expect(second).toBeGreaterThan(2 * first)
    expect(sum(record.series.demand, 0.5)).toBeGreaterThan(180)
    expect(sum(record.series.demand, 0.5)).toBeLessThan(220)
  })

  it('sends each traffic type on its path and header, at its share', async () => {
    const s = await stubServer(200)
    await startLoad(
      config(s.port, {
        curve: [[0, 400]],
        duration: 0.5,
        types: [
          {name: 'mail', share: 0.75},
          {name: 'search', share: 0.25},
        ],
      }),
    ).done
    const mail = s.types.filter((t) => t === 'mail').length
    const search = s.types.filter((t) => t === 'search').length
    expect(mail + search).toBe(s.types.length)
    expect(mail).toBeGreaterThan(2 * search)
    expect(search).toBeGreaterThan(0)
  })

  it('retries failures up to its attempts, and within a budget no more than the budget allows', async () => {
    const {port} = await stubServer(500)
    const unbounded = await startLoad(config(port, {curve: [[0, 100]], duration: 0.5, clients: {...clients, attempts: 4}})).done
    const demand = sum(unbounded.series.demand, unbounded.bucketSeconds)
    expect(sum(unbounded.series.retries, unbounded.bucketSeconds)).toBe(3 * demand)
    expect(sum(unbounded.series.givenUp, unbounded.bucketSeconds)).toBe(demand)
    expect(sum(unbounded.series.errors, unbounded.bucketSeconds)).toBe(4 * demand)

    const budgeted = await startLoad(config(port, {curve: [[0, 100]], duration: 0.5, clients: {...clients, attempts: 4, retryBudget: 0.2, budgetWindow: 10}}))
      .done
    const asked = sum(budgeted.series.demand, budgeted.bucketSeconds)
    const retries = sum(budgeted.series.retries, budgeted.bucketSeconds)
    expect(retries).toBeGreaterThan(0)
    expect(retries).toBeLessThanOrEqual(0.2 * asked)
  })

  it('waits for Retry-After on a 503 when it honours it, and only its own backoff when it does not', async () => {
    const honoured = await stubServer(503, {'retry-after': '0.8'})
    // Two a second, evenly: one arrival, at 0.5 s.
    const one = {curve: [[0, 2]] as Array<[number, number]>, duration: 0.6, clients: {...clients, attempts: 2, backoffBase: 0.05, backoffMax: 0.05}}
    const record = await startLoad(config(honoured.port, one)).done
    expect(honoured.arrivals).toHaveLength(2)
    expect(honoured.arrivals[1] - honoured.arrivals[0]).toBeGreaterThanOrEqual(790)
    expect(sum(record.series.rejected, record.bucketSeconds)).toBe(2)
    await new Promise<void>((resolve) => stub!.close(() => resolve()))

    const ignored = await stubServer(503, {'retry-after': '0.8'})
    await startLoad(config(ignored.port, {...one, clients: {...one.clients, honourRetryAfter: false}})).done
    expect(ignored.arrivals).toHaveLength(2)
    expect(ignored.arrivals[1] - ignored.arrivals[0]).toBeLessThan(500)
  })

  it('counts refused connections and timeouts as failures of their own', async () => {
    fleet = await startFleet({
      pools: [fleetPool({servers: 2})],
    })
    await fleet.command({op: 'fault', pool: 'web', servers: [0], mode: 'refuse'})
    await fleet.command({op: 'fault', pool: 'web', servers: [1], mode: 'hang'})
    const refused = await startLoad(config(fleet.pools[0].ports[0], {curve: [[0, 50]], duration: 0.4})).done
    expect(sum(refused.series.refused, refused.bucketSeconds)).toBe(sum(refused.series.demand, refused.bucketSeconds))
    const hung = await startLoad(config(fleet.pools[0].ports[1], {curve: [[0, 50]], duration: 0.4, clients: {...clients, timeout: 0.3}})).done
    expect(sum(hung.series.timeouts, hung.bucketSeconds)).toBe(sum(hung.series.demand, hung.bucketSeconds))
    expect(sum(hung.series.failed, hung.bucketSeconds)).toBe(sum(hung.series.demand, hung.bucketSeconds))
  })
})

describe('the load generator parts', () => {
  it('reads the demand curve linearly between points and flat past its ends', () => {
    const curve: Array<[number, number]> = [
      [10, 100],
      [20, 300],
    ]
    expect(rateAt(curve, 0)).toBe(100)
    expect(rateAt(curve, 15)).toBe(200)
    expect(rateAt(curve, 99)).toBe(300)
  })

  it('jitters backoff fully under a cap that doubles per retry', () => {
    const c = {backoffBase: 0.1, backoffMax: 1}
    expect(backoffSeconds(c, 1, () => 0.999)).toBeCloseTo(0.0999)
    expect(backoffSeconds(c, 3, () => 0.5)).toBeCloseTo(0.2)
    expect(backoffSeconds(c, 10, () => 0.5)).toBeCloseTo(0.5)
  })

  it('reads Retry-After as seconds, fractions included, and nothing else', () => {
    expect(retryAfterSeconds('5')).toBe(5)
    expect(retryAfterSeconds('0.5')).toBe(0.5)
    expect(retryAfterSeconds('Wed, 21 Oct 2015 07:28:00 GMT')).toBeNull()
    expect(retryAfterSeconds(undefined)).toBeNull()
  })

  it("tells the generator's own shortages from the servers' failures", () => {
    expect(errorOutcome('ECONNREFUSED')).toBe('refused')
    expect(errorOutcome('EMFILE')).toBe('local')
    expect(errorOutcome('EADDRNOTAVAIL')).toBe('local')
    expect(errorOutcome('ECONNRESET')).toBe('error')
    expect(errorOutcome(undefined)).toBe('error')
  })

  it('budgets retries over a sliding window', () => {
    const budget = new RetryBudget(0.5, 10)
    for (let i = 0; i < 4; i++) budget.request(0)
    expect([budget.tryRetry(1), budget.tryRetry(1), budget.tryRetry(1)]).toEqual([true, true, false])
    // Ten seconds on, the window holds none of those requests and none of those retries.
    budget.request(12)
    budget.request(12)
    expect([budget.tryRetry(12), budget.tryRetry(12)]).toEqual([true, false])
  })
})
