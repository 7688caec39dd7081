import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {
  type Bench,
  incidentLog,
  loadTable,
  type Outcomes,
  runIdIn,
  sampler,
  type ServerState,
  sleep,
  startBench,
  until,
  writeTimeline,
} from './haproxy-bench.js'

// Game day: the Azure SQL West Europe incident of July 2022 (shared/seeds), on a real HAProxy 2.6 in
// front of sluice's loopback fleet, with open-loop load throughout. The gateways lost their routing
// metadata: queries on open connections keep working, every new connection fails after a lookup
// that times out, and HAProxy's checks (which need no metadata) see nothing wrong. The fix is to
// restart every gateway, which needed "to be done at a measured pace": a cycle in batches within a
// disruption budget and headroom, the error rate judged between batches. alice runs it; bob
// watches, pauses it between batches and lets it go on; alice's process is killed (kill -9) while a
// batch restarts, and bob resumes the run from his terminal. No gateway may be restarted twice.

const gateways = ['gateway-0', 'gateway-1', 'gateway-2', 'gateway-3', 'gateway-4', 'gateway-5']
const pool = {name: 'gateway', servers: 6, capacity: 40, serviceTime: 0.025, threads: 20, queueLimit: 80, restartSeconds: 1.5}
// 100 requests a second, half of them new connections: 240 rps of gateways, 160 with two out.
const load = {rps: 100, types: {query: 0.5, connect: 0.5}, timeout: 2}
/** The share of the requests that ended in the window that were served. */
const share = (o: Outcomes) => (o.served + o.failed === 0 ? NaN : o.served / (o.served + o.failed))
const drained = (s: Record<string, ServerState>) => Object.entries(s).filter(([, x]) => x.drain || x.maint)
const allUp = (s: Record<string, ServerState>) => Object.values(s).every((x) => x.up && !x.drain && !x.maint)

let bench: Bench
beforeAll(async () => {
  bench = await startBench({name: 'metadata', pools: [pool], check: {interMs: 500, fall: 2, rise: 2}, timeoutServerMs: 3000, load})
}, 60_000)

let left: string[] | undefined
afterAll(async () => {
  left ??= await bench?.stop()
}, 60_000)

describe('game day: the 2022 routing-metadata outage, on HAProxy', () => {
  it('restart every gateway at a measured pace, paused and promoted between batches; kill -9 mid-batch; resume from another terminal restarts no gateway twice', async () => {
    const alice = bench.terminal('alice')
    const bob = bench.terminal('bob')
    const {mark, begin, markedIn} = incidentLog()

    await sleep(3500)
    const calm = await bench.load.between(begin + 1000, Date.now())
    expect(calm.all.failed, JSON.stringify(calm)).toBe(0)
    expect(share(calm.all)).toBeGreaterThan(0.97)

    // The page: every gateway lost its routing metadata. A new connection's lookup times out (0.4 s)
    // and fails (500); queries on open connections are served. HAProxy's checks still pass.
    mark('gateways lose their routing metadata')
    await bench.fault({op: 'hold', pool: 'gateway', type: 'connect', holdSeconds: 0.4})
    const brokenAt = await bench.load.until('new connections failing', (s) => s.connect.demand > 0 && s.connect.served === 0, 30_000)
    mark('paged: new connections fail')
    await sleep(2000)
    const outage = await bench.load.between(brokenAt, Date.now())
    expect(outage.connect.served, JSON.stringify(outage)).toBe(0)
    expect(outage.connect.errors, JSON.stringify(outage)).toBe(outage.connect.failed)
    expect(share(outage.query), JSON.stringify(outage)).toBeGreaterThan(0.97)
    expect(allUp(await bench.servers('gateway'))).toBe(true)

    // The measured restart: two gateways at a time, never more than two out of rotation, never
    // below 20% headroom at 40 rps a gateway, and between batches the error rate must be below the
    // outage's (half of all requests fail before the first restart).
    const file = bench.runbook(
      'gateway-metadata-restart',
      `name: gateway-metadata-restart
description: Restart every gateway at a measured pace so each re-reads its routing metadata.
targets:
  haproxy:
    socket: \${SOCKET}
    backends: {gateway: gateway}
  metrics: {source: haproxy}
steps:
  - action: cycle
    name: Restart the gateways at a measured pace
    pool: gateway
    batch: 2
    budget: 2
    headroom: 20
    capacityPerTarget: 40
    restart: {command: ${bench.restartHook({freshMetadata: true})}, timeout: 30}
    drainTimeout: 10
    healthyTimeout: 20
    bake: 4
    # The verdicts whose windows still hold the batch's drain may fail: three fail the gate.
    gate: {metric: error-rate, threshold: 42, pool: gateway, window: 2, interval: 1, successes: 2, failureLimit: 3}
`,
    )
    const servers = sampler(() => bench.servers('gateway'))
    const run = alice.spawn(['run', file, '--yes'])
    mark('alice: sluice run gateway-metadata-restart')
    await run.seen(/live run \d{8}-\d{6}-[0-9a-f]{4}/)
    const runId = runIdIn(run.output())
    const watch = bob.spawn(['watch', runId])
    expect(run.output()).toContain('all 6 targets now in the group, 2 per batch; keep 20% headroom at 40 rps per target')

    // bob pauses it while the first batch is out; it holds once that batch is back (in its bake), and
    // nothing more is drained or restarted while it holds. (Sent once the batch had returned, a
    // pause that a loaded machine delivers after the batch's 4 s bake lands in the second batch:
    // CI saw it on 2026-12-07.)
    await run.seen(/change deregister haproxy backend gateway \([^)]*\): \[gateway-0,gateway-1\] → null/, 150_000)
    const paused = await bob.run(['pause', runId])
    mark('bob: sluice pause')
    expect(paused.code, paused.stderr).toBe(0)
    expect(paused.stdout).toContain(`pause sent to run ${runId} (gateway-metadata-restart, run by alice on`)
    expect(paused.stdout).toContain('the run took it up: paused')
    await run.seen(/control: pause by bob on \S+ \(pid \d+\): paused/)
    // It holds at its next safe point: the first batch's bake (its gate still measured, its time not
    // counted), once that batch is back in service.
    await run.seen(/change register haproxy backend gateway \([^)]*\): null → \[gateway-0,gateway-1\]/, 60_000)
    const heldFrom = Date.now()
    await sleep(4000)
    const whilePaused = await bench.servers('gateway')
    expect(drained(whilePaused)).toEqual([])
    expect(allUp(whilePaused)).toBe(true)
    expect(bench.hookLog().filter((h) => h.at >= heldFrom)).toEqual([])
    expect(
      bench
        .hookLog()
        .map((h) => `${h.event} ${h.server}`)
        .sort(),
    ).toEqual(['done gateway-0', 'done gateway-1', 'start gateway-0', 'start gateway-1'])
    const promoted = await bob.run(['promote', runId])
    mark('bob: sluice promote')
    expect(promoted.code, promoted.stderr).toBe(0)
    expect(promoted.stdout).toContain('the run took it up: continued from the pause')

    // Mid-batch: once both gateways of the second batch are restarting, alice's process is killed outright.
    await until('the second batch to be restarting', () => bench.hookLog().filter((h) => h.event === 'start').length >= 4, 60_000, 20)
    run.signal('SIGKILL')
    const killed = await run.ended
    mark('alice: kill -9')
    expect(killed.signal).toBe('SIGKILL')
    const secondBatch = bench
      .hookLog()
      .filter((h) => h.event === 'start')
      .slice(2)
      .map((h) => h.server)
      .sort()
    expect(secondBatch).toEqual(['gateway-2', 'gateway-3'])
    // bob's watch sees the run's process gone and says so (exit 4: not running and never ended).
    const watched = await watch.ended
    expect(watched.code, watched.stdout + watched.stderr).toBe(4)
    expect(watched.stdout).toContain(`run ${runId} of gateway-metadata-restart by alice`)
    expect(watched.stdout).toMatch(/control: pause by bob/)
    expect(watched.stdout).toMatch(/control: promote by bob/)
    // HAProxy: the second batch is out of rotation, drained by sluice; the rest serve.
    const afterKill = await bench.servers('gateway')
    expect(drained(afterKill).map(([name]) => name)).toEqual(['gateway-2', 'gateway-3'])
    const listed = await bob.run(['journal'])
    expect(listed.code).toBe(0)
    expect(listed.stdout).toMatch(new RegExp(`${runId}\\s+dead \\(pid ${run.pid} gone\\)\\s+gateway-metadata-restart\\s+alice@`))

    // bob resumes it from his terminal.
    const resumed = bob.spawn(['resume', runId, '--yes'])
    mark('bob: sluice resume')
    const done = await resumed.ended
    mark('resume ended')
    const during = await servers.stop()
    await sleep(3000)
    const after = await bench.load.between(done.endedAt, Date.now())

    // No gateway restarted twice: one start and one end per gateway in the hook log, each given its address.
    const hooks = bench.hookLog()
    const starts = hooks.filter((h) => h.event === 'start')
    expect
      .soft(starts.map((h) => h.server).sort(), `restart hook log:\n${hooks.map((h) => `${h.event} ${h.server} ${h.address}`).join('\n')}`)
      .toEqual(gateways)
    expect
      .soft(
        hooks
          .filter((h) => h.event === 'done')
          .map((h) => h.server)
          .sort(),
      )
      .toEqual(gateways)
    expect.soft(starts.filter((h) => !/^127\.0\.0\.1:\d+$/.test(h.address)).map((h) => `${h.server} given "${h.address}"`)).toEqual([])
    // The resume finished the cycle.
    expect.soft(done.code, done.stdout + done.stderr).toBe(0)
    expect.soft(done.stderr).toContain(`resuming run ${runId} (gateway-metadata-restart)`)
    expect.soft(done.stdout).toContain('Outcome: completed — gateway-metadata-restart: its step is done')
    // HAProxy: every gateway up and in rotation; never more than the budget out at once, alice's run and bob's resume together.
    const end = await bench.servers('gateway')
    expect.soft(allUp(end), JSON.stringify(end)).toBe(true)
    expect.soft(Math.max(...during.map((d) => drained(d.value).length))).toBe(2)
    // What the clients saw after: every new connection served again, every query too.
    expect.soft(share(after.connect), JSON.stringify(after)).toBeGreaterThan(0.97)
    expect.soft(share(after.query), JSON.stringify(after)).toBeGreaterThan(0.97)
    // And throughout, with two gateways out at a time, the queries never went short of capacity.
    const throughout = await bench.load.between(brokenAt, done.endedAt)
    expect.soft(throughout.query.timeouts, JSON.stringify(throughout)).toBe(0)
    expect.soft(share(throughout.query), JSON.stringify(throughout)).toBeGreaterThan(0.97)

    // The journal: both processes, the controls, and every gateway drained once and returned once.
    const journal = await bob.run(['journal', runId, '--json'])
    expect(journal.code, journal.stderr).toBe(0)
    const j = JSON.parse(journal.stdout) as {status: string; entries: Array<Record<string, any>>}
    expect.soft(j.status).toBe('completed')
    expect.soft(j.entries.filter((e) => e.type === 'control').map((e) => [e.control.kind, e.control.operator, e.effect])).toEqual([
      ['pause', 'bob', 'paused'],
      ['promote', 'bob', 'continued'],
    ])
    expect.soft(j.entries.filter((e) => e.type === 'resume').map((e) => e.operator)).toEqual(['bob'])
    const outcomes = j.entries.filter((e) => e.type === 'mutation' && e.mutation.phase === 'outcome' && e.mutation.ok).map((e) => e.mutation)
    const out = outcomes.filter((m) => m.kind === 'deregister').flatMap((m) => m.before as string[])
    const back = outcomes.filter((m) => m.kind === 'register').flatMap((m) => m.after as string[])
    expect.soft(out.sort()).toEqual(gateways)
    expect.soft(back.sort()).toEqual(gateways)
    const verdicts = j.entries.filter((e) => e.type === 'verdict').map((e) => e.verdict)
    // Judged between batches, alice's first and the last, which bob's resume ran.
    expect
      .soft([...new Set(verdicts.map((v) => v.context))])
      .toEqual(expect.arrayContaining(['batch 1 of 3 (gateway-0, gateway-1)', expect.stringMatching(/\(gateway-4, gateway-5\)$/)]))

    const rows = await bench.load.seconds(begin, Date.now())
    await writeTimeline(
      'haproxy-metadata',
      'Game day: the 2022 routing-metadata outage on HAProxy',
      [
        'Every gateway loses its routing metadata: new connections fail (a lookup that times out, then 500), queries on open connections are served, and HAProxy sees every gateway healthy.',
        'alice restarts the gateways two at a time (budget 2, 20% headroom), the error rate judged between batches; bob watches, pauses after the first batch and promotes.',
        "alice's process is killed (kill -9) while the second batch restarts; bob resumes the run from his terminal.",
      ],
      [{runId, what: 'alice, then bob: the measured restart'}],
      bob,
      loadTable(rows, ['query', 'connect'], markedIn),
    )

    left = await bench.stop()
    expect(left).toEqual([])
  }, 300_000)
})
