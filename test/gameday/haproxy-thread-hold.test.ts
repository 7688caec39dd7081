import {request} from 'node:http'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {
  type Bench,
  incidentLog,
  loadTable,
  type Outcomes,
  type Ran,
  runIdIn,
  sampler,
  type ServerState,
  sleep,
  startBench,
  until,
  writeTimeline,
} from './haproxy-bench.js'

// Game day: the Microsoft 365 CAFE incident of November 2024 (shared/seeds), on a real HAProxy 2.6
// in front of sluice's loopback fleet, with open-loop load throughout. Lookups for a removed
// backend take a path that holds a thread each; the front ends run out of threads and stall, and a
// stalled front end stays stalled until it is restarted. Played from the page to the all-clear by
// three terminals: alice runs the incident, bob watches and tries what a second operator would, and
// a deploy pipeline asks whether it may deploy.

const pool = {name: 'cafe', servers: 4, capacity: 50, serviceTime: 0.02, threads: 12, queueLimit: 100, restartSeconds: 1}
// 100 requests a second, a quarter of them lookups: 25 a second hold a thread for 10 s each, six
// times what the pool's 48 threads can hold.
const load = {rps: 100, types: {interactive: 0.75, lookup: 0.25}, timeout: 2}
const reason = 'INC-2411 CAFE routing threads held by lookups for a removed backend: no deploys'
/** The share of the requests that ended in the window that were served. */
const share = (o: Outcomes) => (o.served + o.failed === 0 ? NaN : o.served / (o.served + o.failed))
const epoch = (iso: string) => new Date(iso).getTime()

let bench: Bench
beforeAll(async () => {
  bench = await startBench({
    name: 'thread-hold',
    pools: [pool],
    check: {interMs: 500, fall: 2, rise: 2},
    timeoutServerMs: 3000,
    load,
  })
}, 60_000)

let left: string[] | undefined
afterAll(async () => {
  left ??= await bench?.stop()
}, 60_000)

/** One request through HAProxy, as a client sends it: status, headers, body. */
function get(path: string): Promise<{status: number; headers: Record<string, unknown>; body: string}> {
  return new Promise((resolve, reject) => {
    const req = request({host: '127.0.0.1', port: bench.port, path, agent: false}, (res) => {
      let body = ''
      res.on('data', (d: Buffer) => (body += d.toString()))
      res.on('end', () => resolve({status: res.statusCode!, headers: res.headers, body}))
    })
    req.on('error', reject)
    req.end()
  })
}

const outOfRotation = (s: Record<string, ServerState>) => Object.entries(s).filter(([, x]) => x.drain || x.maint)
const allUp = (s: Record<string, ServerState>) => Object.values(s).every((x) => x.up && !x.drain && !x.maint)

describe('game day: the 2024 CAFE thread hold, on HAProxy', () => {
  it('restrict the lookups, restart the stalled front ends, keep deploys frozen, let the lookups back by degrees behind a gate, all-clear, unfreeze', async () => {
    const alice = bench.terminal('alice')
    const bob = bench.terminal('bob')
    const pipeline = bench.terminal('deploy-pipeline')
    const {mark, begin, markedIn} = incidentLog()

    // Before: every front end up, nothing restricted, every request of either type served.
    await sleep(3500)
    expect(Object.values(await bench.servers('cafe')).map((s) => s.up)).toEqual([true, true, true, true])
    expect(await bench.map(bench.restrictMap)).toEqual({})
    const calm = await bench.load.between(begin + 1000, Date.now())
    expect(calm.interactive.failed, JSON.stringify(calm)).toBe(0)
    expect(calm.lookup.failed, JSON.stringify(calm)).toBe(0)
    expect(share(calm.all)).toBeGreaterThan(0.97)

    // The page: the removed backend's lookups start holding threads (10 s each). Every front end
    // runs out, stalls (checks included), and HAProxy takes each out of rotation.
    mark('lookups start holding threads')
    await bench.fault({op: 'hold', pool: 'cafe', type: 'lookup', holdSeconds: 10})
    await until('HAProxy to take every front end out of rotation', async () => Object.values(await bench.servers('cafe')).every((s) => !s.up), 45_000)
    const stalledAt = await bench.load.until('interactive traffic failing entirely', (s) => s.interactive.demand > 0 && s.interactive.served === 0, 45_000)
    mark('paged: nothing served')
    expect(Object.values(await bench.servers('cafe')).map((s) => s.up)).toEqual([false, false, false, false])
    const outage = await bench.load.between(stalledAt, stalledAt + 1000)
    expect(outage.interactive.served).toBe(0)
    expect(outage.lookup.served).toBe(0)

    // alice freezes changes; the deploy pipeline is refused from then on.
    const frozen = await alice.run(['freeze', '--reason', reason])
    mark('alice: sluice freeze')
    expect(frozen.code, frozen.stderr).toBe(0)
    expect(frozen.stdout).toContain(`1. [done] Freeze changes: ${reason}`)
    const freezeRun = runIdIn(frozen.stderr)
    const refused = await pipeline.run(['freeze', 'check'])
    expect(refused.code, refused.stderr).toBe(4)
    expect(refused.stdout.trim()).toMatch(new RegExp(`^frozen since \\S+ by alice: ${reason}$`))

    // The recovery: turn the lookups away at HAProxy, then restart the stalled front ends half at
    // a time (they stay stalled otherwise), each half gated on the backend's error rate, then check.
    const recovery = bench.runbook(
      'cafe-thread-hold',
      `name: cafe-thread-hold
description: Turn the thread-holding lookups away, restart the stalled front ends half at a time, check.
targets:
  haproxy:
    socket: \${SOCKET}
    backends: {cafe: cafe}
    restrictMap: \${RESTRICT_MAP}
  metrics: {source: haproxy}
steps:
  - action: restrict
    name: Turn away the lookups that hold threads
    type: lookup
    paths: [/t/lookup]
    retryAfter: 30
  - action: cycle
    name: Restart the stalled front ends
    pool: cafe
    batch: 50%
    budget: 50%
    # Headroom as a careful operator writes it. Every front end has stalled: a batch already out
    # of rotation takes no capacity away, so the guard must not refuse the one way out.
    headroom: 10
    capacityPerTarget: 50
    restart: {command: ${bench.restartHook()}, timeout: 30}
    drainTimeout: 10
    healthyTimeout: 20
    bake: 3
    gate: {metric: error-rate, threshold: 5, pool: cafe, window: 3, interval: 1, successes: 2}
  - action: check
    name: Errors are gone with the lookups turned away
    bake: 4
    gate: {metric: error-rate, threshold: 2, pool: cafe, window: 3, interval: 1, successes: 2}
`,
    )
    const servers = sampler(() => bench.servers('cafe'))
    const run = alice.spawn(['run', recovery, '--yes'])
    mark('alice: sluice run cafe-thread-hold')
    await run.seen(/live run \d{8}-\d{6}-[0-9a-f]{4}/)
    const runId = runIdIn(run.output())
    // bob follows it from his own terminal.
    const watch = bob.spawn(['watch', runId])
    // The restriction is HAProxy's own answer: a lookup gets a fast 503 with Retry-After, before any server.
    await run.seen(/\[step 1\] done lookup traffic now gets 503 with Retry-After: 30/)
    mark('lookups restricted')
    expect(await bench.map(bench.restrictMap)).toEqual({'/t/lookup': 'lookup:30'})
    const turnedAway = await get('/t/lookup/resolve')
    expect(turnedAway.status).toBe(503)
    expect(turnedAway.headers['retry-after']).toBe('30')
    expect(JSON.parse(turnedAway.body)).toEqual({error: 'temporarily restricted during recovery', type: 'lookup'})
    // The pipeline asks again mid-recovery: still refused.
    // The first restart, as the terminal shows it: the batch's step, or the journalled restart itself.
    await run.seen(/batch 1 of 2 \([^)]*\): restart|change restart .*→ cafe-[01]\b/)
    const midRun = await pipeline.run(['freeze', 'check'])
    expect(midRun.code).toBe(4)
    const ran = await run.ended
    mark('recovery run done')
    const watched = await watch.ended
    const during = await servers.stop()

    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stdout).toContain('Outcome: completed — cafe-thread-hold: all 3 steps done')
    expect(ran.stderr).toMatch(/\[step 2\] done cycled 4 targets in 2 batches/)
    // bob saw the run as alice's terminal drew it, to its end, and ended as it did.
    expect(watched.code, watched.stderr).toBe(0)
    expect(watched.stdout).toContain(`run ${runId} of cafe-thread-hold by alice`)
    expect(watched.stdout).toMatch(/\[step 1\] done lookup traffic now gets 503 with Retry-After: 30/)
    expect(watched.stdout).toMatch(/\[step 2\] done cycled 4 targets in 2 batches/)
    expect(watched.stdout).toMatch(/run: completed cafe-thread-hold: all 3 steps done/)
    expect(watched.stderr).toContain(`run ${runId} ended: completed`)

    // HAProxy throughout: never more than the budget (2 of 4) drained by sluice at once, each front
    // end drained in its turn; at the end all four up and in rotation.
    expect(Math.max(...during.map((d) => outOfRotation(d.value).length))).toBe(2)
    expect(new Set(during.flatMap((d) => outOfRotation(d.value).map(([name]) => name)))).toEqual(new Set(['cafe-0', 'cafe-1', 'cafe-2', 'cafe-3']))
    expect(allUp(await bench.servers('cafe'))).toBe(true)
    expect(await bench.map(bench.restrictMap)).toEqual({'/t/lookup': 'lookup:30'})

    // The hook log: each front end restarted once, two at a time, the second pair after the first came back.
    const hooks = bench.hookLog()
    expect(
      hooks
        .filter((h) => h.event === 'start')
        .map((h) => h.server)
        .sort(),
    ).toEqual(['cafe-0', 'cafe-1', 'cafe-2', 'cafe-3'])
    expect(
      hooks
        .filter((h) => h.event === 'done')
        .map((h) => h.server)
        .sort(),
    ).toEqual(['cafe-0', 'cafe-1', 'cafe-2', 'cafe-3'])
    const firstPair = hooks.slice(0, 2).map((h) => h.server)
    const secondPairStarts = hooks.filter((h) => h.event === 'start' && !firstPair.includes(h.server)).map((h) => h.at)
    const firstPairDone = hooks.filter((h) => h.event === 'done' && firstPair.includes(h.server)).map((h) => h.at)
    expect(Math.min(...secondPairStarts)).toBeGreaterThan(Math.max(...firstPairDone))

    // The journal says the same, change by change.
    const journal = await alice.run(['journal', runId, '--json'])
    expect(journal.code, journal.stderr).toBe(0)
    const entries = (JSON.parse(journal.stdout) as {status: string; entries: Array<Record<string, any>>}).entries
    expect(JSON.parse(journal.stdout).status).toBe('completed')
    const outcomes = entries.filter((e) => e.type === 'mutation' && e.mutation.phase === 'outcome').map((e) => e.mutation)
    expect(outcomes.every((m) => m.ok)).toBe(true)
    // Each front end's restart is journalled once (so a resume never restarts it again).
    const restarts = outcomes.filter((m) => m.kind === 'restart').map((m) => m.after as string)
    expect(restarts).toHaveLength(4)
    expect(new Set(restarts).size).toBe(4)
    const changes = outcomes.filter((m) => m.kind !== 'restart')
    expect(changes.map((m) => m.kind)).toEqual(['restrict', 'deregister', 'register', 'deregister', 'register'])
    expect(changes[0].after).toEqual({type: 'lookup', paths: ['/t/lookup'], headers: {}, retryAfterSeconds: 30})
    expect(new Set(changes[1].before)).toEqual(new Set(firstPair))
    expect(new Set(changes[2].after)).toEqual(new Set(firstPair))
    const verdicts = entries.filter((e) => e.type === 'verdict').map((e) => e.verdict)
    expect(verdicts.length).toBeGreaterThanOrEqual(6)
    expect(verdicts.every((v) => v.outcome === 'pass')).toBe(true)

    // What the clients saw once it was done: every interactive request served; every lookup turned away by HAProxy (503), none timing out on a stalled server.
    await sleep(3000)
    const recovered = await bench.load.between(ran.endedAt, Date.now())
    expect(share(recovered.interactive), JSON.stringify(recovered)).toBeGreaterThan(0.97)
    expect(recovered.lookup.served).toBe(0)
    expect(recovered.lookup.rejected).toBe(recovered.lookup.failed)
    expect(recovered.lookup.demand).toBeGreaterThan(0)

    // The dependency is fixed (the removed backend's lookups are answered again). The lookups come
    // back by degrees, each step baked behind the backend's error rate, bob watching.
    await bench.fault({op: 'hold', pool: 'cafe', type: null})
    mark('the lookup path is fixed')
    const maps = sampler(() => bench.map(bench.restrictMap))
    const lift = alice.spawn([
      'lift',
      '--type',
      'lookup',
      '--schedule',
      '25,50,100',
      '--bake',
      '5',
      '--gate-metric',
      'error-rate',
      '--gate-threshold',
      '2',
      '--gate-pool',
      'cafe',
      '--gate-window',
      '3',
      '--gate-interval',
      '1',
      '--gate-successes',
      '2',
      '--haproxy-socket',
      bench.socket,
      '--restrict-map',
      bench.restrictMap,
      '--backend',
      'cafe=cafe',
      '--yes',
    ])
    mark('alice: sluice lift --schedule 25,50,100')
    await lift.seen(/live run \d{8}-\d{6}-[0-9a-f]{4}/)
    const liftId = runIdIn(lift.output())
    const liftWatch = bob.spawn(['watch', liftId])
    await lift.seen(/lookup 50% back/)
    const stillFrozen = await pipeline.run(['freeze', 'check'])
    expect(stillFrozen.code).toBe(4)
    const lifted = await lift.ended
    mark('lift done')
    const liftWatched = await liftWatch.ended
    const mapsSeen = await maps.stop()
    expect(lifted.code, lifted.stderr).toBe(0)
    expect(lifted.stdout).toContain('Outcome: completed — lift-from-the-command-line: its step is done')
    expect(liftWatched.code, liftWatched.stderr).toBe(0)
    for (const line of ['lookup 25% back (75% turned away)', 'lookup 50% back (50% turned away)', 'lookup 100% back (lifted)', 'run: completed'])
      expect(liftWatched.stdout).toContain(line)
    // HAProxy's map went through each degree in order, each one atomic commit: 25% let through, 50%, then no entry.
    expect(mapsSeen.map((m) => m.value)).toEqual([{'/t/lookup': 'lookup:30'}, {'/t/lookup': 'lookup:30:25'}, {'/t/lookup': 'lookup:30:50'}, {}])

    // The clients saw each degree: about a quarter of the lookups served, then half, then all, and
    // the interactive traffic untouched throughout.
    const liftJournal = JSON.parse((await alice.run(['journal', liftId, '--json'])).stdout) as {status: string; entries: Array<Record<string, any>>}
    expect(liftJournal.status).toBe('completed')
    const liftChanges = liftJournal.entries.filter((e) => e.type === 'mutation' && e.mutation.phase === 'outcome')
    expect(liftChanges.map((e) => [e.mutation.kind, e.mutation.after?.share ?? null, e.mutation.ok])).toEqual([
      ['restriction-share', 75, true],
      ['restriction-share', 50, true],
      ['lift', null, true],
    ])
    const [at25, at50, at100] = liftChanges.map((e) => epoch(e.at))
    const liftEnd = epoch(liftJournal.entries.at(-1)!.at)
    const degrees = [await bench.load.between(at25 + 500, at50), await bench.load.between(at50 + 500, at100), await bench.load.between(at100 + 500, liftEnd)]
    const lookupShares = degrees.map((d) => share(d.lookup))
    expect(lookupShares[0], JSON.stringify(degrees)).toBeGreaterThan(0.1)
    expect(lookupShares[0], JSON.stringify(degrees)).toBeLessThan(0.42)
    expect(lookupShares[1], JSON.stringify(degrees)).toBeGreaterThan(0.3)
    expect(lookupShares[1], JSON.stringify(degrees)).toBeLessThan(0.7)
    expect(lookupShares[2], JSON.stringify(degrees)).toBeGreaterThan(0.97)
    for (const d of degrees) {
      expect(share(d.interactive), JSON.stringify(d)).toBeGreaterThan(0.97)
      // What a lookup was not served, HAProxy turned away: no server failed it.
      expect(d.lookup.failed).toBe(d.lookup.rejected)
    }
    const liftVerdicts = liftJournal.entries.filter((e) => e.type === 'verdict').map((e) => e.verdict)
    expect(liftVerdicts.map((v) => v.context).filter((c, i, all) => all.indexOf(c) === i)).toEqual(['lookup 25% back', 'lookup 50% back', 'lookup 100% back'])
    expect(liftVerdicts.every((v) => v.outcome === 'pass')).toBe(true)

    // All-clear: every server up, nothing restricted, everything served.
    await sleep(3000)
    mark('all-clear')
    const clear = await bench.load.between(lifted.endedAt, Date.now())
    expect(share(clear.interactive), JSON.stringify(clear)).toBeGreaterThan(0.97)
    expect(share(clear.lookup), JSON.stringify(clear)).toBeGreaterThan(0.97)
    expect(clear.all.failed).toBe(0)
    expect(allUp(await bench.servers('cafe'))).toBe(true)
    expect(await bench.map(bench.restrictMap)).toEqual({})

    // Unfreeze: bob's is refused (the freeze is alice's, and he did not --force it); alice lifts it; deploys may go.
    const bobUnfreeze = await bob.run(['unfreeze'])
    expect(bobUnfreeze.code).toBe(4)
    expect(bobUnfreeze.stdout).toContain(`the freeze in place is not this run's to lift (frozen since`)
    expect((await pipeline.run(['freeze', 'check'])).code).toBe(4)
    const unfrozen = await alice.run(['unfreeze'])
    mark('alice: sluice unfreeze')
    expect(unfrozen.code, unfrozen.stderr).toBe(0)
    expect(unfrozen.stdout).toContain('Outcome: completed')
    const open = await pipeline.run(['freeze', 'check'])
    expect(open.code).toBe(0)
    expect(open.stdout.trim()).toBe('not frozen')

    const rows = await bench.load.seconds(begin, Date.now())
    const timeline = await writeTimeline(
      'haproxy-thread-hold',
      'Game day: the 2024 CAFE thread hold on HAProxy',
      [
        'Lookups for a removed backend hold a front-end thread for 10 s each; every front end stalls, checks included, and HAProxy takes all four out of rotation.',
        'alice freezes deploys (the pipeline is refused, exit 4), turns the lookups away at HAProxy, restarts the stalled front ends two at a time behind an error-rate gate; bob watches.',
        'The lookup path is fixed; alice lets the lookups back 25% → 50% → 100%, each step baked behind the gate, bob watching; all-clear; bob cannot unfreeze, alice does.',
      ],
      [
        {runId: freezeRun, what: 'alice: sluice freeze'},
        {runId, what: 'alice: the recovery runbook'},
        {runId: liftId, what: 'alice: sluice lift by degrees'},
        {runId: runIdIn(bobUnfreeze.stderr), what: 'bob: sluice unfreeze (refused)'},
        {runId: runIdIn(unfrozen.stderr), what: 'alice: sluice unfreeze'},
      ],
      alice,
      loadTable(rows, ['interactive', 'lookup'], markedIn),
    )
    expect(timeline.text).toContain(runId)

    // Nothing the game day started is left running.
    left = await bench.stop()
    expect(left).toEqual([])
    expect(bench.transcript.filter((r: Ran) => r.signal !== null)).toEqual([])
  }, 240_000)
})
