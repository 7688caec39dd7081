import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {type Bench, greenShare, incidentLog, loadTable, runIdIn, sampler, sleep, startCanaryBench, writeTimeline} from './haproxy-bench.js'

// Game day: a pool back from its restart, judged against itself before each change (issue 52's
// `relativeTo: before`), on a real HAProxy 2.6 with open-loop load throughout. green was restarted
// and took back 10% of the traffic; blue, the pool that carried the outage, serves a build of its
// own, so its errors are no measure of green's. alice ramps green 25% → 50% → 100%, each share
// judged on green's errors against green's own at the share before (watched for 6 s, journalled
// before the change). Her laptop dies mid-bake at 25% (kill -9), and green, busier now, starts
// failing 5% of its requests. bob resumes: the change was made, so his bake is judged against
// the baseline alice journalled (green at 10%, no errors), not against green as it is now, which
// would compare the failure with itself and pass it. The judge fails green 25%; the ramp goes
// back to 10% and the run holds there. carol reads the verdict on the bridge's page.

const start = {blue: '90', green: '10'}
type Entry = Record<string, any>

let bench: Bench
beforeAll(async () => {
  bench = await startCanaryBench('before-baseline', {blue: 90, green: 10})
}, 60_000)

let left: string[] | undefined
afterAll(async () => {
  left ??= await bench?.stop()
}, 60_000)

describe('game day: a pool judged against itself before each change, on HAProxy', () => {
  it("alice's ramp is killed mid-bake at green 25% as green starts failing; bob's resume judges it against the baseline alice journalled at 10%, fails it and holds at 10%; the page quotes the verdict", async () => {
    const alice = bench.terminal('alice')
    const bob = bench.terminal('bob')
    const carol = bench.terminal('carol')
    const bridge = carol.spawn(['serve', '--port', '0', '--json'])
    await bridge.seen(/"url":"[^"]+"/)
    const page = JSON.parse(/\{"url".*\}/.exec(bridge.output())![0]) as {url: string}
    const {mark, begin, markedIn} = incidentLog()

    await sleep(3500)
    const calm = await bench.load.between(begin + 1000, Date.now())
    expect(calm.all.failed, JSON.stringify(calm)).toBe(0)
    expect(await bench.map(bench.rampMap)).toEqual(start)

    const file = bench.runbook(
      'green-back',
      `name: green-back
description: Bring green, back from its restart, up to its full share, each share judged on green's own errors at the share before.
targets:
  haproxy:
    socket: \${SOCKET}
    backends: {blue: blue, green: green}
    rampMap: \${RAMP_MAP}
  metrics: {source: haproxy}
steps:
  - action: ramp
    name: Green back to its share
    set: green
    schedule: [25, 50, 100]
    bake: 15
    onFailure: hold
    gate: {metric: error-rate, judge: counts, relativeTo: before, window: 6, threshold: 1, pool: green, interval: 1}
`,
    )
    const plan = await alice.run(['plan', file])
    expect(plan.code, plan.stderr).toBe(0)
    expect(plan.stdout).toContain('first watches green for 6 s before each of its 3 changes (6 intervals each; 18 s in all), its baseline')
    const maps = sampler(() => bench.map(bench.rampMap), 50)

    // alice starts; the step watches green at 10% for 6 s, journals that, moves green to 25% and bakes.
    const first = alice.spawn(['run', file, '--yes'])
    mark('alice: sluice run green-back')
    await first.seen(/against green before the step [\d.]+% of [\d,]+: .*→ inconclusive \(green 25%\)/, 90_000)
    const runId = runIdIn(first.output())
    first.signal('SIGKILL')
    mark("alice's laptop dies (kill -9) mid-bake at green 25%")
    expect((await first.ended).signal).toBe('SIGKILL')
    expect(await bench.map(bench.rampMap)).toEqual({blue: '75', green: '25'})
    // Busier now, green starts failing a twentieth of its requests.
    await bench.fault({op: 'errors', pool: 'green', percent: 5})
    mark('green fails 5% of its requests at 25%')

    // bob resumes: the run's pid is gone from this host, so the lock is his at once.
    const resumed = bob.spawn(['resume', runId, '--yes'])
    mark('bob: sluice resume')
    const held = await resumed.ended
    mark('the judge fails green 25% against green at 10%: back to 10%, held')
    const seen = (await maps.stop()).map((s) => s.value)
    const said = held.stdout + held.stderr
    expect(held.code, said).toBe(3)
    expect(await bench.map(bench.rampMap)).toEqual(start)
    expect(seen.map(greenShare)).toEqual([10, 25, 10])
    // bob watched nothing before judging: the change was made before he came.
    expect(said).not.toContain('watching green for 6 s before the change')

    const journal = JSON.parse((await bob.run(['journal', runId, '--json'])).stdout) as {status: string; entries: Entry[]}
    expect(journal.status).toBe('held')
    const entries = journal.entries
    // One baseline in the whole run, alice's, journalled before her change's intent; none before
    // the move back, which puts back what a gate refused rather than making a new change.
    const baselines = entries.filter((e) => e.type === 'baseline')
    expect(baselines).toHaveLength(1)
    const intents = entries.filter((e) => e.type === 'mutation' && e.mutation.phase === 'intent')
    expect(baselines[0].seq).toBeLessThan(intents[0].seq)
    expect(intents[0].mutation.after).toEqual({blue: 75, green: 25})
    const resume = entries.find((e) => e.type === 'resume')!
    expect(resume.operator).toBe('bob')
    expect(baselines[0].seq).toBeLessThan(resume.seq)
    const intervals = baselines[0].baseline.intervals as Array<{requests: number; errors: number}>
    expect(intervals.length).toBeGreaterThanOrEqual(3)
    expect(intervals.every((c) => c.errors === 0)).toBe(true)
    const baselineRequests = intervals.reduce((a, c) => a + c.requests, 0)

    // bob's verdicts: against that baseline, to the request, never against green after the change.
    const bobs = entries.filter((e) => e.type === 'verdict' && e.seq > resume.seq).map((e) => e.verdict)
    expect(bobs.length).toBeGreaterThan(0)
    for (const v of bobs) {
      expect(v.context).toBe('green 25%')
      expect(v.baseline).toMatchObject({of: 'before the step', value: 0, requests: baselineRequests})
    }
    const failed = bobs.at(-1)!
    expect(failed.outcome).toBe('fail')
    expect(failed.counts.sure).toBeGreaterThanOrEqual(failed.counts.needs)
    expect(failed.said).toMatch(
      new RegExp(`^green [\\d.]+% of [\\d,]+ against green before the step 0\\.0% of ${baselineRequests.toLocaleString('en-US')}: worse by`),
    )
    expect(said).toContain(`${failed.said}`)
    // bob's bake weighs only what came after he took over.
    expect(bobs[0].said).toContain('1 interval so far')

    // carol's page says what the journal says.
    const shown = (await (await fetch(`${page.url}api/runs/${runId}`)).json()) as {
      life: {status: string}
      verdicts: Array<{context: string; outcome: string; why: string | null}>
    }
    expect(shown.life.status).toBe('held')
    expect(shown.verdicts.at(-1)).toMatchObject({context: 'green 25%', outcome: 'fail', why: failed.said})
    mark('carol reads the verdict on the bridge page')

    // Held at 10%: the clients see green's 5% on a tenth of the traffic, about 0.5%, where at 25% they
    // saw 1.25%. Over 8 s, some 16 failures are expected, and 32 (1%) would be far out.
    await sleep(9000)
    const whileHeld = (await bench.load.between(held.endedAt + 500, Date.now())).all
    const share = whileHeld.failed / (whileHeld.served + whileHeld.failed)
    expect(share, JSON.stringify(whileHeld)).toBeGreaterThan(0)
    expect(share, JSON.stringify(whileHeld)).toBeLessThan(0.01)
    await bench.fault({op: 'errors', pool: 'green', percent: 0})
    bridge.signal('SIGTERM')
    expect((await bridge.ended).code).toBe(0)

    const rows = await bench.load.seconds(begin, Date.now())
    await writeTimeline(
      'haproxy-before-baseline',
      'Game day: a pool judged against itself before each change, on HAProxy',
      [
        "green, back from its restart at 10%, is ramped 25% → 50% → 100%, each share judged on green's errors against its own at the share before (watched 6 s, journalled before the change), onFailure: hold.",
        "alice's laptop dies mid-bake at green 25% (kill -9), and green, busier, starts failing 5% of its requests.",
        'bob resumes: the change was made, so his bake is judged against the baseline alice journalled at 10%, not green as it is now. The judge fails green 25%; the ramp goes back to 10% and holds (exit 3).',
        "carol reads the judge's sentence on the bridge's page.",
      ],
      [{runId, what: 'alice, then bob: green back to its share'}],
      bob,
      loadTable(rows, ['web'], markedIn),
    )
    left = await bench.stop()
    expect(left).toEqual([])
  }, 240_000)
})
