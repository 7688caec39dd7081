import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {HaproxyPoolReadings, inRotation, noServerTimeout, type SamplingClock} from '../../src/haproxy/pool-readings.js'
import {RuntimeApi} from '../../src/haproxy/runtime.js'
import {FailedError, InputError} from '../../src/errors.js'
import {capturedBackendRow, capturedServerRow, showStat, statRow} from '../helpers/haproxy-show-stat.js'

/** Time that moves only when the readings sleep, from a fixed epoch; an interrupted sleep takes no time. */
class FakeClock implements SamplingClock {
  constructor(public ms: number) {}
  now(): number {
    return this.ms
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    if (!signal?.aborted) this.ms += Math.max(0, ms)
    return Promise.resolve()
  }
}

const t0 = Date.UTC(2026, 11, 4, 12, 0, 0)

/** The counters of backend app at a time: what a test's HAProxy has answered by then. */
interface Counters {
  stot: number
  hrsp_2xx: number
  hrsp_5xx: number
  act: number
  rtime: number
}

/**
 * A Runtime API that answers `show stat app 2 -1` from `counters(ms)` at the clock's time, in
 * HAProxy 2.6's real columns, and `show stat app 4 -1` with `servers`; `gone(ms)` makes it fail as
 * a removed socket does.
 */
function fakeApi(
  clock: FakeClock,
  counters: (ms: number) => Counters,
  servers: Array<{name: string; status: string}> = [],
  gone = (_ms: number) => false,
): RuntimeApi {
  const api = new RuntimeApi('/run/haproxy/admin.sock')
  api.send = (command) => {
    if (gone(clock.ms)) return Promise.reject(new FailedError('haproxy runtime API at /run/haproxy/admin.sock: no such socket'))
    if (command === 'show stat app 2 -1') return Promise.resolve(showStat([statRow(capturedBackendRow, {...counters(clock.ms)})]))
    if (command === 'show stat app 4 -1')
      return Promise.resolve(
        showStat([
          statRow(capturedBackendRow, {}),
          ...servers.map((s) => statRow(capturedServerRow, {svname: s.name, status: s.status, check_fall: 2, check_rise: 3})),
        ]),
      )
    return Promise.reject(new Error(`unexpected command ${command}`))
  }
  return api
}

/** Ten requests a second from t0, one in five a 5xx; two servers active until 3 s in, then one. */
const steady = (ms: number): Counters => {
  const s = Math.floor((ms - t0) / 1000)
  return {stot: 10 * s, hrsp_2xx: 8 * s, hrsp_5xx: 2 * s, act: ms - t0 < 3000 ? 2 : 1, rtime: 40 + s}
}

describe('HAProxy pool readings: sampling a window', () => {
  it('sums each second into its 2 s period from start: requests, errors, servers active on average, latency at the end', async () => {
    const clock = new FakeClock(t0)
    const seen: Array<[number, number]> = []
    const readings = new HaproxyPoolReadings(fakeApi(clock, steady), 'app', {clock, onSample: (e, t) => seen.push([e, t])})
    const periods = await readings.history(new Date(t0), new Date(t0 + 6000), 2)
    expect(periods).toEqual([
      {at: t0 / 1000, requests: 20, errors: 4, healthy: 2, rotationChanged: false, latency: 0.042},
      // A server went out between 2 s and 3 s: served per server is not to be read from this period.
      {at: t0 / 1000 + 2, requests: 20, errors: 4, healthy: 1.5, rotationChanged: true, latency: 0.044},
      {at: t0 / 1000 + 4, requests: 20, errors: 4, healthy: 1, rotationChanged: false, latency: 0.046},
    ])
    expect(seen).toEqual([0, 1, 2, 3, 4, 5, 6].map((e) => [e, 6]))
    expect(readings.notes).toEqual([])
  })

  it("counts what one server serves from the servers in rotation at both ends of each second, not a server's draining", async () => {
    const clock = new FakeClock(t0)
    const api = new RuntimeApi('/run/haproxy/admin.sock')
    const seconds = () => Math.floor((clock.ms - t0) / 1000)
    // a takes and answers 10 a second throughout; b is taken out at 3 s and answers what it queued until 5 s.
    const servers = () => {
      const s = seconds()
      return [
        {svname: 'a', status: 'UP', stot: 10 * s, hrsp_2xx: 10 * s},
        {svname: 'b', status: s < 3 ? 'UP' : 'DOWN', stot: 10 * Math.min(s, 3), hrsp_2xx: 10 * Math.min(s, 5)},
      ]
    }
    api.send = (command) => {
      const rows = servers()
      if (command === 'show stat app 2 -1') {
        const act = rows.filter((r) => r.status === 'UP').length
        const sum = (k: 'stot' | 'hrsp_2xx') => rows.reduce((n, r) => n + r[k], 0)
        return Promise.resolve(showStat([statRow(capturedBackendRow, {stot: sum('stot'), hrsp_2xx: sum('hrsp_2xx'), hrsp_5xx: 0, act, rtime: 100})]))
      }
      if (command === 'show stat app 4 -1') return Promise.resolve(showStat(rows.map((r) => statRow(capturedServerRow, {...r, check_fall: 2, check_rise: 3}))))
      return Promise.reject(new Error(`unexpected command ${command}`))
    }
    const periods = await new HaproxyPoolReadings(api, 'app', {clock}).history(new Date(t0), new Date(t0 + 6000), 2)
    expect(periods.map((p) => p.inRotation)).toEqual([
      {requests: 40, served: 40, serverSeconds: 4},
      {requests: 20, served: 20, serverSeconds: 2},
      {requests: 20, served: 20, serverSeconds: 2},
    ])
  })

  it('waits for a start in the future, and leaves out periods with no requests', async () => {
    const clock = new FakeClock(t0 - 5000)
    // Nothing for the first 2 s of the window.
    const quietFirst = (ms: number) => ({...steady(ms), stot: Math.max(0, steady(ms).stot - 20), hrsp_2xx: Math.max(0, steady(ms).hrsp_2xx - 20)})
    const periods = await new HaproxyPoolReadings(fakeApi(clock, quietFirst), 'app', {clock}).history(new Date(t0), new Date(t0 + 6000), 2)
    expect(periods.map((p) => p.at)).toEqual([t0 / 1000 + 2, t0 / 1000 + 4])
    expect(clock.ms).toBe(t0 + 6000)
  })

  it('counts a counter that went backwards (HAProxy reloaded) from its new value', async () => {
    const clock = new FakeClock(t0)
    // Reloaded 3 s in: from then the counters start again from zero.
    const reloaded = (ms: number) => (ms - t0 < 3000 ? steady(ms) : steady(ms - 3000))
    const periods = await new HaproxyPoolReadings(fakeApi(clock, reloaded), 'app', {clock}).history(new Date(t0), new Date(t0 + 6000), 2)
    // 2→3 s reads 30 then 0: nothing lost but that second (counted as 0); 3→4 s reads 0 then 10.
    expect(periods.map((p) => p.requests)).toEqual([20, 10, 20])
  })

  it('stops when HAProxy goes away after a whole period, keeping whole periods and saying so', async () => {
    const clock = new FakeClock(t0)
    const readings = new HaproxyPoolReadings(
      fakeApi(clock, steady, [], (ms) => ms >= t0 + 5000),
      'app',
      {clock},
    )
    const periods = await readings.history(new Date(t0), new Date(t0 + 8000), 2)
    expect(periods.map((p) => p.at)).toEqual([t0 / 1000, t0 / 1000 + 2])
    expect(readings.notes).toEqual([
      'sampling backend app stopped at 2026-12-04T12:00:05Z because HAProxy stopped answering (haproxy runtime API at /run/haproxy/admin.sock: no such socket); 4 s of the 8 s window was read (2 whole periods)',
    ])
  })

  it('fails when HAProxy is gone before one period was read', async () => {
    const clock = new FakeClock(t0)
    const readings = new HaproxyPoolReadings(
      fakeApi(clock, steady, [], (ms) => ms >= t0 + 1000),
      'app',
      {clock},
    )
    await expect(readings.history(new Date(t0), new Date(t0 + 8000), 2)).rejects.toThrow(
      /^sampling backend app at \/run\/haproxy\/admin\.sock stopped at 2026-12-04T12:00:01Z before one 2 s period was read: HAProxy stopped answering/,
    )
  })

  it('returns what it read when interrupted, with a note', async () => {
    const clock = new FakeClock(t0)
    const stop = new AbortController()
    const readings = new HaproxyPoolReadings(fakeApi(clock, steady), 'app', {clock, onSample: (elapsed) => elapsed >= 3 && stop.abort()})
    const periods = await readings.history(new Date(t0), new Date(t0 + 8000), 2, stop.signal)
    expect(periods.map((p) => p.requests)).toEqual([20])
    expect(readings.notes[0]).toMatch(
      /^sampling backend app stopped at 2026-12-04T12:00:03Z because it was interrupted; 3 s of the 8 s window was read \(1 whole periods\)$/,
    )
  })

  it('refuses a window that has already ended: HAProxy has no history', async () => {
    const clock = new FakeClock(t0)
    await expect(new HaproxyPoolReadings(fakeApi(clock, steady), 'app', {clock}).history(new Date(t0 - 60_000), new Date(t0), 10)).rejects.toThrow(InputError)
  })
})

describe('HAProxy pool readings: now', () => {
  it('is demand and error rate between two readings nowSeconds apart, and the servers in rotation', async () => {
    const clock = new FakeClock(t0)
    const servers = ['UP', 'UP 1/3', 'DOWN', 'DOWN 1/2', 'MAINT', 'DRAIN', 'no check'].map((status, i) => ({name: `s${i}`, status}))
    const now = await new HaproxyPoolReadings(fakeApi(clock, steady, servers), 'app', {clock, nowSeconds: 4}).now()
    expect(now).toEqual({at: t0 / 1000 + 4, demand: 10, errorRate: 0.2, servers: 7, healthy: 3})
  })

  it('is an error rate of 0 with no requests', async () => {
    const clock = new FakeClock(t0)
    const idle = () => ({stot: 5, hrsp_2xx: 5, hrsp_5xx: 0, act: 1, rtime: 0})
    const one = [{name: 's1', status: 'UP'}]
    expect(await new HaproxyPoolReadings(fakeApi(clock, idle, one), 'app', {clock, nowSeconds: 1}).now()).toMatchObject({demand: 0, errorRate: 0})
  })

  it('takes UP, a server going down and one without checks as in rotation, nothing else', () => {
    expect(['UP', 'UP 2/3', 'no check', 'DOWN', 'DOWN 1/2', 'NOLB', 'MAINT', 'MAINT (via app/s1)', 'DRAIN', 'UPWARD'].map(inRotation)).toEqual([
      true,
      true,
      true,
      false,
      false,
      false,
      false,
      false,
      false,
      false,
    ])
  })
})

describe('HAProxy pool readings: settings', () => {
  let dir: string
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'sluice-haproxy-readings-'))
  })
  afterAll(() => rmSync(dir, {recursive: true, force: true}))

  it("reads servers and fall/rise from show stat, the rest from the configuration, under HAProxy's names", async () => {
    const cfg = join(dir, 'haproxy.cfg')
    writeFileSync(cfg, 'defaults\n  timeout check 1s\nbackend app\n  default-server inter 500ms fall 9 rise 9 slowstart 4s\n  server s0 x:1\n  server s1 x:2\n')
    const clock = new FakeClock(t0)
    const servers = [
      {name: 's0', status: 'UP'},
      {name: 's1', status: 'DOWN'},
    ]
    const readings = new HaproxyPoolReadings(fakeApi(clock, steady, servers), 'app', {config: cfg, clock})
    expect(readings.source).toBe('HAProxy at /run/haproxy/admin.sock: backend app (Runtime API show stat)')
    const s = await readings.settings()
    // fall and rise as HAProxy runs them (the stat columns say 2 and 3), not as the file now says (9).
    expect(s).toMatchObject({
      label: 'HAProxy backend app',
      family: 'haproxy',
      servers: 2,
      healthy: 1,
      interval: 0.5,
      checkTimeout: 1,
      fall: 2,
      rise: 3,
      slowStart: 4,
    })
    expect(s).toMatchObject({drainDelay: 0, failoverPercent: null})
    expect(s.haproxy).toEqual({
      fastinter: 0.5,
      downinter: 0.5,
      observe: 'none',
      errorLimit: 10,
      onError: 'fastinter',
      timeoutServer: noServerTimeout,
      from: `${cfg}:3 (backend app)`,
    })
    expect(s.names).toMatchObject({interval: 'inter', checkTimeout: 'timeout check', fall: 'fall', rise: 'rise', slowStart: 'slowstart'})
    expect(readings.notes).toEqual([`backend app sets no timeout server (HAProxy then waits for an answer without end); taken as ${noServerTimeout} s`])
    await readings.settings()
    expect(readings.notes).toHaveLength(1)
  })
})
