import {readFileSync} from 'node:fs'
import {join} from 'node:path'
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

// Game day: a cold return, rolled back. The green pool was just rebuilt (its servers restarted:
// cold, a fifth of their capacity until they have served for minutes), and alice's change moves
// the traffic onto it by a gated ramp, on a real HAProxy 2.6 in front of sluice's loopback fleet,
// with open-loop load throughout. The step the cold pool cannot carry fails its gate and the ramp
// goes back to its last good weights. alice rolls the run back: a ramp of its own onto blue, the
// pool that receives the traffic, each step behind the gate. bob aborts the rollback mid-bake from
// his terminal; it holds where it is (rollback-held); `sluice resume` finishes the way back, never
// forwards. HAProxy's ramp map must end exactly as it was before the run, and blue's share of it
// must never go down on the way back.

const warm = {capacity: 50, serviceTime: 0.02, threads: 20, queueLimit: 20, restartSeconds: 1}
// Checks slower than the clients give up (1 s), so an overloaded server fails its clients well
// before it fails its checks: the gate sees the overload, and HAProxy keeps the pool in rotation.
const check = {interMs: 2000, fall: 3, rise: 2}
const load = {rps: 100, types: {web: 1}, timeout: 1}
const before = {blue: '100', green: '0'}
/** The share of the requests that ended in the window that were served. */
const share = (o: Outcomes) => (o.served + o.failed === 0 ? NaN : o.served / (o.served + o.failed))
const allUp = (s: Record<string, ServerState>) => Object.values(s).every((x) => x.up && !x.drain && !x.maint)
const blueShare = (m: Record<string, string>) => (100 * Number(m.blue)) / (Number(m.blue) + Number(m.green))
const epoch = (iso: string) => new Date(iso).getTime()

let bench: Bench
beforeAll(async () => {
  bench = await startBench({
    name: 'cold-return',
    pools: [
      {name: 'blue', servers: 4, ...warm},
      // Rebuilt: 40 rps among four servers while cold, 200 once warm, which takes ten minutes of serving.
      {name: 'green', servers: 4, ...warm, coldFactor: 0.2, warmupSeconds: 600},
    ],
    check,
    timeoutServerMs: 3000,
    ramp: {ramped: 'green', other: 'blue', weights: {blue: 100, green: 0}},
    load,
  })
}, 60_000)

let left: string[] | undefined
/** The gate's passing verdicts at green 100% over windows in which most clients failed, as the game day found them. */
let blindVerdicts: unknown[] | undefined
afterAll(async () => {
  left ??= await bench?.stop()
}, 60_000)

describe('game day: a cold return rolled back, on HAProxy', () => {
  it('the ramp onto a cold pool fails its gate and holds; the rollback onto the receiving pool is aborted mid-bake and held; resume finishes it; the map ends as before the run', async () => {
    const alice = bench.terminal('alice')
    const bob = bench.terminal('bob')
    // carol keeps the bridge's page up throughout (`sluice serve --controls`), as the incident commander.
    const carol = bench.terminal('carol')
    const bridge = carol.spawn(['serve', '--port', '0', '--controls', '--json'])
    await bridge.seen(/"token":"[^"]+"}/)
    const page = JSON.parse(/\{"url".*\}/.exec(bridge.output())![0]) as {url: string; token: string}
    const onPage = async (runId: string) =>
      (await (await fetch(`${page.url}api/runs/${runId}`)).json()) as {
        life: {status: string}
        phase: string
        controls: Array<{control: string; by: string}>
        weights: Array<{shares: Record<string, number>}>
      }
    const {mark, begin, markedIn} = incidentLog()

    // green is rebuilt: every server restarted, back cold, and in rotation again (it takes no traffic yet).
    await bench.fault({op: 'restart', pool: 'green'})
    mark('green rebuilt (cold)')
    await sleep(1500)
    await until('green back in rotation', async () => allUp(await bench.servers('green')), 30_000)
    expect(allUp(await bench.servers('blue'))).toBe(true)
    expect(await bench.map(bench.rampMap)).toEqual(before)
    await sleep(2000)
    const calm = await bench.load.between(begin + 1000, Date.now())
    expect(calm.all.failed, JSON.stringify(calm)).toBe(0)

    // alice's change: the traffic onto green, 5% → 10% → 20% → 100%, each step behind green's error rate.
    const file = bench.runbook(
      'green-cold-return',
      `name: green-cold-return
description: Move the traffic onto the rebuilt green pool, behind its error rate.
targets:
  haproxy:
    socket: \${SOCKET}
    backends: {blue: blue, green: green}
    rampMap: \${RAMP_MAP}
  metrics: {source: haproxy}
steps:
  - action: ramp
    name: Move the traffic onto green
    set: green
    schedule: [5, 10, 20, 100]
    bake: 6
    gate: {metric: error-rate, threshold: 5, pool: green, window: 3, interval: 1, successes: 2}
`,
    )
    const forwardMaps = sampler(() => bench.map(bench.rampMap), 50)
    mark('alice: sluice run green-cold-return')
    const forward = await alice.run(['run', file, '--yes'])
    mark('alice: the ramp fails its gate')
    const forwardSeen = (await forwardMaps.stop()).map((s) => s.value)
    const runId = runIdIn(forward.stderr)
    // The gate caught the cold pool at 100%, and the ramp went back to its last good weights.
    expect(forward.code, forward.stderr).toBe(3)
    expect(forward.stdout).toMatch(/Outcome: (gate-failed|rolled back)/)
    expect(forward.stdout + forward.stderr).toMatch(/gate error-rate ≤ 5% over 3 s \(green\) failed at green 100%/)
    expect(await bench.map(bench.rampMap)).toEqual({blue: '80', green: '20'})
    expect(forwardSeen).toEqual([
      before,
      {blue: '95', green: '5'},
      {blue: '90', green: '10'},
      {blue: '80', green: '20'},
      {blue: '0', green: '100'},
      {blue: '80', green: '20'},
    ])
    // The journal: each change and the failed verdict at green 100%.
    const forwardJournal = JSON.parse((await alice.run(['journal', runId, '--json'])).stdout) as {status: string; entries: Array<Record<string, any>>}
    const weights = forwardJournal.entries.filter((e) => e.type === 'mutation' && e.mutation.phase === 'outcome' && e.mutation.ok)
    expect(weights.map((e) => e.mutation.after)).toEqual([
      {blue: 95, green: 5},
      {blue: 90, green: 10},
      {blue: 80, green: 20},
      {blue: 0, green: 100},
      {blue: 80, green: 20},
    ])
    const failed = forwardJournal.entries.filter((e) => e.type === 'verdict' && e.verdict.outcome === 'fail').map((e) => e.verdict)
    expect(failed.map((v) => [v.context, v.gate])).toEqual([['green 100%', 'error-rate ≤ 5% over 3 s (green)']])
    // What the clients saw: the small steps served; the cold pool at 100% failed them until the ramp went back.
    const [at5, , , at100, back20] = weights.map((e) => epoch(e.at))
    const small = await bench.load.between(at5, at100)
    expect(share(small.all), JSON.stringify(small)).toBeGreaterThan(0.97)
    const cold = await bench.load.between(at100, back20 + 1000)
    expect(cold.all.failed, JSON.stringify(cold)).toBeGreaterThan(0.1 * (cold.all.served + cold.all.failed))
    // Each verdict at green 100% said what the clients saw over its window: none may pass a window in
    // which most of the clients' requests failed (all of them went to green then).
    const rows100 = await bench.load.seconds(at100, back20)
    const blind = forwardJournal.entries
      .filter((e) => e.type === 'verdict' && e.verdict.context === 'green 100%' && e.verdict.outcome === 'pass')
      .map((e) => {
        const seen = rows100.filter((r) => r.at >= epoch(e.at) - 3000 && r.at + 1000 <= epoch(e.at))
        const failed = seen.reduce((n, r) => n + r.types.all.failed, 0)
        const ended = seen.reduce((n, r) => n + r.types.all.failed + r.types.all.served, 0)
        return {
          at: e.at,
          gate: `${e.verdict.value}% of ${e.verdict.requests} requests: ${e.verdict.outcome}`,
          clients: `${failed} of ${ended} failed`,
          share: failed / ended,
        }
      })
      .filter((v) => v.share > 0.5)
    blindVerdicts = blind

    // alice rolls it back: onto blue, in steps through the weights the run passed, each behind the
    // gate of the ramp moved to blue. bob watches; mid-bake, he aborts it from his terminal.
    const wayBack = sampler(() => bench.map(bench.rampMap), 50)
    const rollback = alice.spawn(['rollback', runId, '--yes'])
    mark('alice: sluice rollback')
    await rollback.seen(/way back: blue 90%/)
    const watch = bob.spawn(['watch', runId])
    // Sent at once: the bake at blue 90% is 6 s, and a loaded machine's checks before it took longer (CI).
    const aborted = await bob.run(['abort', runId])
    mark('bob: sluice abort')
    const plan = rollback.output()
    expect(plan).toContain(`set the weights of haproxy map ${bench.rampMap} (${bench.socket}) back to blue=100 green=0 in 3 steps (blue 90% → 95% → 100%)`)
    expect(plan).toContain('each baked 6 s behind the gate of step 1: error-rate ≤ 5% over 3 s (blue)')
    expect(plan).toContain('traffic goes onto blue:')
    // blue, the receiving pool, did not fail a gate in this run (green did): the plan must not say it did.
    expect(plan).not.toContain('which failed a gate in this run')
    expect(aborted.code, aborted.stderr).toBe(0)
    expect(aborted.stdout).toContain('the run took it up: aborting')
    const held = await rollback.ended
    mark('rollback stopped')
    expect(held.code, held.stdout + held.stderr).toBe(130)
    expect(held.stdout + held.stderr).toContain(`rollback of run ${runId} stopped`)
    // bob's watch followed the way back to where it stopped, and ended as it did.
    const watched = await watch.ended
    expect(watched.code, watched.stdout + watched.stderr).toBe(130)
    expect(watched.stdout).toMatch(/way back: blue 90%/)
    expect(watched.stdout).toMatch(/abort by bob/)
    // Held where it was: blue 90%, and the run says so.
    expect(await bench.map(bench.rampMap)).toEqual({blue: '90', green: '10'})
    const heldJournal = JSON.parse((await bob.run(['journal', runId, '--json'])).stdout) as {status: string}
    expect(heldJournal.status).toBe('rollback-held')
    const listed = await bob.run(['journal'])
    expect(listed.stdout).toMatch(new RegExp(`${runId}\\s+rollback-held\\s+green-cold-return\\s+alice@`))
    // The bridge's page says what the journal says: held on the way back, bob's abort, blue at 90%.
    const heldOnPage = await onPage(runId)
    expect(heldOnPage.life.status).toBe('rollback-held')
    expect(heldOnPage.phase).toBe('back')
    expect(heldOnPage.controls.map((c) => [c.control, c.by.split('@')[0]])).toEqual([['abort', 'bob']])
    expect(heldOnPage.weights.at(-1)!.shares).toEqual({blue: 90, green: 10})
    // A pause from the page while nothing runs is refused, and nothing reaches the journal.
    const refused = await fetch(`${page.url}api/runs/${runId}/control`, {
      method: 'POST',
      headers: {'content-type': 'application/json', authorization: `Bearer ${page.token}`},
      body: JSON.stringify({kind: 'pause', operator: 'carol'}),
    })
    mark('carol: pause from the bridge page (refused: not running)')
    expect(refused.status).toBe(409)
    await sleep(2000)
    expect(await bench.map(bench.rampMap)).toEqual({blue: '90', green: '10'})

    // alice resumes: the rollback goes on from blue 90%, backwards only, to where the run found the map.
    const resumed = await alice.run(['resume', runId, '--yes'])
    mark('alice: sluice resume')
    const backSeen = (await wayBack.stop()).map((s) => s.value)
    expect(resumed.code, resumed.stdout + resumed.stderr).toBe(0)
    expect(resumed.stderr).toContain(`run ${runId} is partway through its rollback (rollback-held): resume goes on with the rollback, never forwards`)
    expect(resumed.stdout).toContain(`run ${runId} rolled back`)
    // HAProxy's map is exactly what it was before the run, and what its file says.
    expect(await bench.map(bench.rampMap)).toEqual(before)
    const file0 = Object.fromEntries(
      readFileSync(join(bench.haproxy.dir, 'ramp.map'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => l.split(' ')),
    )
    expect(await bench.map(bench.rampMap)).toEqual(file0)
    // blue's share never went down on the way back: 80 → 90 → 95 → 100, each an atomic commit.
    const shares = backSeen.map(blueShare)
    expect(shares).toEqual([80, 90, 95, 100])
    for (let i = 1; i < shares.length; i++) expect(shares[i]).toBeGreaterThanOrEqual(shares[i - 1])

    // The journal: the run forwards, then its way back in two attempts, every step a change the map shows.
    const journal = JSON.parse((await bob.run(['journal', runId, '--json'])).stdout) as {status: string; entries: Array<Record<string, any>>}
    expect(journal.status).toBe('rolled-back')
    const endOnPage = await onPage(runId)
    expect(endOnPage.life.status).toBe('rolled-back')
    expect(endOnPage.controls).toHaveLength(1)
    expect(endOnPage.weights.at(-1)!.shares).toEqual({blue: 100, green: 0})
    bridge.signal('SIGTERM')
    expect((await bridge.ended).code).toBe(0)
    const back = journal.entries.filter((e) => e.type === 'mutation' && e.mutation.phase === 'outcome' && e.mutation.step === -1)
    expect(back.map((e) => [e.mutation.after, e.mutation.ok])).toEqual([
      [{blue: 90, green: 10}, true],
      [{blue: 95, green: 5}, true],
      [{blue: 100, green: 0}, true],
    ])
    expect(journal.entries.filter((e) => e.type === 'rollback-start').map((e) => [e.operator, e.continues ?? false])).toEqual([
      ['alice', false],
      ['alice', true],
    ])
    expect(journal.entries.filter((e) => e.type === 'rollback-end').map((e) => e.outcome)).toEqual(['interrupted', 'rolled-back'])
    expect(journal.entries.filter((e) => e.type === 'control').map((e) => [e.control.kind, e.control.operator, e.effect])).toEqual([
      ['abort', 'bob', 'aborting'],
    ])
    const backVerdicts = journal.entries.filter((e) => e.type === 'verdict' && e.verdict.step === -1).map((e) => e.verdict)
    expect(backVerdicts.length).toBeGreaterThan(0)
    expect(backVerdicts.every((v) => v.outcome === 'pass' && v.gate === 'error-rate ≤ 5% over 3 s (blue)')).toBe(true)

    // All-clear: everything on blue, everything served.
    await sleep(3000)
    const clear = await bench.load.between(resumed.endedAt, Date.now())
    expect(clear.all.failed, JSON.stringify(clear)).toBe(0)
    expect(share(clear.all)).toBeGreaterThan(0.99)
    expect(allUp(await bench.servers('blue'))).toBe(true)

    const rows = await bench.load.seconds(begin, Date.now())
    await writeTimeline(
      'haproxy-cold-return',
      'Game day: a cold return rolled back, on HAProxy',
      [
        "green is rebuilt (its servers restarted, cold: a fifth of their capacity). alice's ramp moves traffic onto it, 5% → 10% → 20% → 100%, behind green's error rate.",
        'At 100% the cold pool fails its clients; the gate fails and the ramp goes back to 20%, its last good weights (exit 3).',
        'alice rolls the run back onto blue (90% → 95% → 100%, behind the gate moved to blue); bob aborts it mid-bake at blue 90% (exit 130, rollback-held); alice resumes and it finishes backwards.',
      ],
      [{runId, what: 'alice: the ramp, then its rollback'}],
      bob,
      loadTable(rows, ['web'], markedIn),
    )

    left = await bench.stop()
    expect(left).toEqual([])
  }, 240_000)

  // KNOWN DEFECT, open (issue 44's closing note): with `option abortonclose` set as docs/live.md
  // asks, the gate still passed "0% of 136 requests" over a window in which 154 of 170 clients had
  // timed out. Expected to fail until the HAProxy error-rate gate sees clients that give up; when
  // this starts failing, the defect is fixed: make it a plain `it`.
  it.fails('no gate verdict at green 100% passes a window in which most clients failed', () => {
    expect(blindVerdicts).toBeDefined()
    expect(blindVerdicts, 'passing verdicts at green 100% over windows in which most clients failed').toEqual([])
  })
})
