import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {approve} from '../../src/actions/approve/approve.js'
import {approvedSteps} from '../../src/loader/approvals.js'
import {watchGate} from '../../src/engine/gate.js'
import {runRunbook} from '../../src/engine/engine.js'
import {LocalStore} from '../../src/local/local-store.js'
import type {ControlEffect, ControlIntent, ControlSender, PromoteListener, RunControls} from '../../src/ports/controls.js'
import {gateDefaults, type Gate} from '../../src/runbook/gate.js'
import {ControlPoller} from '../../src/state/controls.js'
import {LeaseObserver} from '../../src/state/liveness.js'
import {lifeAt} from '../../src/state/run-life.js'
import {control, FakeClock, RecordingIO, runbook} from '../helpers/fakes.js'

/** Controls the test sets by hand, as the poller would on reading them. */
class HandControls implements RunControls {
  runId = '20261130-054012-a1b2'
  pausedBy: ControlSender | null = null
  fullyPromotedBy: ControlSender | null = null
  /** What each promote did, as the sender is told. */
  said: string[] = []
  now = ''
  private waiting: Array<{did: () => string; take: (who: ControlSender) => void}> = []
  whilePaused = async () => undefined
  listenForPromote(did: () => string, signal: AbortSignal): PromoteListener {
    let taken = false
    let resolve!: (who: ControlSender | null) => void
    const promoted = new Promise<ControlSender | null>((r) => (resolve = r))
    const entry = {
      did,
      take: (who: ControlSender) => {
        taken = true
        resolve(who)
      },
    }
    const release = () => {
      this.waiting = this.waiting.filter((w) => w !== entry)
      if (!taken) resolve(null)
    }
    this.waiting.push(entry)
    signal.addEventListener('abort', release, {once: true})
    return {promoted, taken: () => taken, release}
  }
  doing(what: string): void {
    this.now = what
  }
  promote(): void {
    const first = this.waiting.shift()
    if (!first) return void this.said.push(`nothing was waiting for a promote: ${this.now}`)
    this.said.push(first.did())
    first.take({operator: 'bob', host: 'elsewhere', pid: 1})
  }
  subscribe(_listener: (c: ControlIntent, e: ControlEffect, did: string) => void): void {}
}

const gate: Gate = {...gateDefaults, metric: 'error-rate', threshold: 1, interval: 10, successes: 2}
const who = {operator: 'alice', host: 'laptop', pid: 7}

function metricsWith(onRead: (n: number) => void) {
  let n = 0
  return {label: 'm', read: async () => (onRead(++n), {value: 0.1, requests: null})}
}

/** A bake of `bake` s on a fake clock: only the controls and what the metrics read differ between these tests. */
function bakeWith(controls: RunControls, metrics: ReturnType<typeof metricsWith>, bake: number) {
  return watchGate({
    gate,
    bake,
    step: 0,
    context: 'x',
    signal: new AbortController().signal,
    clock: new FakeClock(),
    metrics,
    onVerdict: () => undefined,
    controls,
  })
}

describe('controls inside a bake', () => {
  it('a pause stops counting the bake, and the gate is still measured meanwhile', async () => {
    const controls = new HandControls()
    const metrics = metricsWith((n) => {
      if (n === 2) controls.pausedBy = {operator: 'alice', host: 'laptop', pid: 7}
      if (n === 6) controls.pausedBy = null
    })
    const result = await bakeWith(controls, metrics, 60)
    expect(result.outcome).toBe('pass')
    // 60 s of bake at 10 s a verdict is 6 verdicts; reads 2 to 5 were paused (4 intervals uncounted).
    expect(result.verdicts).toHaveLength(10)
  })

  it('a promote ends the bake early, but only once the gate has its passes in a row', async () => {
    const controls = new HandControls()
    const metrics = metricsWith((n) => {
      if (n === 1) controls.promote()
    })
    const result = await bakeWith(controls, metrics, 300)
    expect(result.outcome).toBe('pass')
    expect(result.verdicts).toHaveLength(2)
  })
})

describe('approve steps', () => {
  const steps = `  - {action: approve, message: Go on?, name: go-on}\n`

  it('a live approval is answered by a promote from anywhere, and says who', async () => {
    const controls = new HandControls()
    const io = new RecordingIO(true)
    setTimeout(() => controls.promote(), 20)
    // A clock whose hour never passes: only the promote can answer.
    const clock = Object.assign(new FakeClock(), {
      sleep: (_s: number, signal?: AbortSignal) => new Promise<void>((r) => signal?.addEventListener('abort', () => r(), {once: true})),
    })
    const result = await runRunbook(runbook(steps), {control: control({clock}), io, signal: new AbortController().signal, controls})
    expect(result.outcome).toBe('completed')
    expect(result.steps[0].message).toBe('approved by bob on elsewhere (sluice promote): Go on?')
    // --yes (here: an io that says yes to every confirm) never answers a live approval.
    expect(io.questions).toEqual([])
  })

  it('a live approval nobody answers holds the run after its timeout, refused (exit 4), resumable', async () => {
    const result = await runRunbook(runbook(`  - {action: approve, message: Go on?, timeout: 30}\n`), {
      control: control({}),
      io: new RecordingIO(true),
      signal: new AbortController().signal,
      controls: new HandControls(),
    })
    expect(result.outcome).toBe('refused')
    expect(result.message).toMatch(/no approval within 30 s: Go on\?; holding here .*sluice resume 20261130-054012-a1b2/)
  })

  it('--approve names steps by number or name; anything else is bad input naming the approve steps', async () => {
    const rb = runbook(`  - {action: wait, for: 1}\n${steps}`)
    expect(approvedSteps(rb, ['2', 'go-on'])).toEqual([1, 1])
    expect(() => approvedSteps(rb, ['1'])).toThrow(/^--approve 1: step 1 \(Wait 1 s\) is a wait step, not an approve step; the approve steps are 2 \(go-on\)$/)
    expect(() => approvedSteps(rb, ['nope'])).toThrow(/no step named nope/)
    const result = await runRunbook(rb, {
      control: control({}),
      io: new RecordingIO(),
      signal: new AbortController().signal,
      controls: new HandControls(),
      approved: [1],
    })
    expect(result.steps[1].message).toBe('approved by --approve: Go on?')
    expect(approve.action).toBe('approve')
  })
})

describe('controls through a state store', () => {
  it('are numbered per run, polled by the running process, acted on once, and refused for a run that is not running', async () => {
    const store = new LocalStore(mkdtempSync(join(tmpdir(), 'sluice-controls-')))
    const runId = '20261130-054012-a1b2'
    await store.append(runId, {
      seq: 1,
      at: new Date().toISOString(),
      type: 'run-start',
      runId,
      runbookName: 'rb',
      runbookSha256: 'x',
      runbookFile: '/tmp/rb.yaml',
      operator: 'alice',
      host: 'h',
      pid: 1,
      aws: {},
      resources: [],
    })
    expect(lifeAt(runId, await store.read(runId), await store.locks(), new LeaseObserver()).state).toBe('dead')
    await store.sendControl(runId, {...who, kind: 'pause', at: new Date().toISOString()})
    const aborted: ControlIntent[] = []
    const poller = new ControlPoller(
      store,
      runId,
      (c) => aborted.push(c),
      () => undefined,
    )
    await poller.start(20)
    const seen: Array<[string, string]> = []
    poller.subscribe((c, e) => seen.push([c.kind, e]))
    // The pause sent before the run started is an earlier run's, never acted on.
    await store.sendControl(runId, {...who, kind: 'promote', at: new Date().toISOString()})
    await store.sendControl(runId, {...who, kind: 'pause', at: new Date().toISOString()})
    await new Promise((r) => setTimeout(r, 100))
    expect(poller.pausedBy).toEqual(who)
    await store.sendControl(runId, {...who, kind: 'promote', at: new Date().toISOString()})
    await store.sendControl(runId, {...who, kind: 'abort', at: new Date().toISOString()})
    await new Promise((r) => setTimeout(r, 100))
    await poller.stop()
    expect(seen).toEqual([
      // Nothing was waiting for it: said so, never counted as done.
      ['promote', 'nothing waiting'],
      ['pause', 'paused'],
      ['promote', 'continued'],
      ['abort', 'aborting'],
    ])
    expect(aborted.map((c) => c.seq)).toEqual([5])
    expect((await store.controls(runId)).map((c) => c.seq)).toEqual([1, 2, 3, 4, 5])
  })
})

describe('a promote is acknowledged only when something acted on it', () => {
  it('the wait listening for it takes it, and the sender is told what it did; with nothing listening, what the run is doing', async () => {
    const store = new LocalStore(mkdtempSync(join(tmpdir(), 'sluice-controls-')))
    const runId = '20261130-054012-b2c3'
    const poller = new ControlPoller(
      store,
      runId,
      () => undefined,
      () => undefined,
    )
    await poller.start(20)
    const seen: Array<[string, string]> = []
    poller.subscribe((_c, e, did) => seen.push([e, did]))
    poller.doing('the run is at step 4 (Ramp): setting weights')
    await store.sendControl(runId, {...who, kind: 'promote', at: new Date().toISOString()})
    await new Promise((r) => setTimeout(r, 100))
    const stop = new AbortController()
    const listening = poller.listenForPromote(() => 'approved step 6 (Approval: go?)', stop.signal)
    await store.sendControl(runId, {...who, kind: 'promote', at: new Date().toISOString()})
    expect(await listening.promoted).toEqual(who)
    expect(listening.taken()).toBe(true)
    // Taken once: a second promote finds nothing waiting.
    await store.sendControl(runId, {...who, kind: 'promote', at: new Date().toISOString()})
    await new Promise((r) => setTimeout(r, 100))
    await poller.stop()
    expect(seen).toEqual([
      ['nothing waiting', 'nothing was waiting for a promote: the run is at step 4 (Ramp): setting weights'],
      ['promoted', 'approved step 6 (Approval: go?)'],
      ['nothing waiting', 'nothing was waiting for a promote: the run is at step 4 (Ramp): setting weights'],
    ])
  })

  it('an approval listens from its first instant: a promote while it reads a minute of metrics approves at once', async () => {
    const controls = new HandControls()
    // Metrics that take as long as HAProxy's counters do over a 60 s window, on a clock that never passes.
    const metrics = {
      label: 'm',
      read: (_k: string, _w: number, _p?: string, signal?: AbortSignal) =>
        new Promise<never>((_r, reject) => signal?.addEventListener('abort', () => reject(new Error('aborted')), {once: true})),
    }
    const clock = Object.assign(new FakeClock(), {
      sleep: (_s: number, signal?: AbortSignal) => new Promise<void>((r) => signal?.addEventListener('abort', () => r(), {once: true})),
    })
    setTimeout(() => controls.promote(), 20)
    const result = await runRunbook(runbook(`  - {action: approve, message: Go on?}\n`), {
      control: control({clock, metrics}),
      io: new RecordingIO(true),
      signal: new AbortController().signal,
      controls,
    })
    expect(result.outcome).toBe('completed')
    expect(result.steps[0].message).toBe('approved by bob on elsewhere (sluice promote): Go on?')
    expect(controls.said).toEqual(['approved step 1 (Approval: Go on?)'])
  })
})

describe('controls in a wait, or a bake with no gate', () => {
  const noAbort = () => new AbortController().signal

  it('a pause stops the clock of a wait; the time paused does not count', async () => {
    const controls = new HandControls()
    const clock = new FakeClock()
    const sleep = clock.sleep.bind(clock)
    let slept = 0
    clock.sleep = async (seconds, signal) => {
      slept++
      if (slept === 3) controls.pausedBy = who
      if (slept === 8) controls.pausedBy = null
      await sleep(seconds, signal)
    }
    let holds = 0
    controls.whilePaused = async () => {
      holds++
      await sleep(1)
    }
    const result = await runRunbook(runbook('  - {action: wait, for: 10}\n'), {control: control({clock}), io: new RecordingIO(), signal: noAbort(), controls})
    expect(result.steps[0]).toMatchObject({status: 'done', message: 'waited 10 s'})
    // Paused from the 3rd one-second slice to the 8th: five slices and five holds of a second
    // each that do not count, then the wait goes on to its full ten counted seconds.
    expect(holds).toBe(5)
    expect(slept).toBe(15)
    expect(clock.now()).toBe(10 + 5 + 5)
  })

  it('a promote ends a wait early: there is no gate it could skip', async () => {
    const controls = new HandControls()
    const clock = new FakeClock()
    const sleep = clock.sleep.bind(clock)
    clock.sleep = async (seconds, signal) => {
      await sleep(seconds, signal)
      if (clock.now() >= 3) controls.promote()
    }
    const result = await runRunbook(runbook('  - {action: wait, for: 600}\n'), {control: control({clock}), io: new RecordingIO(), signal: noAbort(), controls})
    expect(result.steps[0]).toMatchObject({status: 'done', message: 'promoted before the wait of 600 s was over'})
    expect(clock.now()).toBe(3)
  })

  it('without controls (a rehearsal) a wait is one sleep in virtual time', async () => {
    const clock = new FakeClock()
    let sleeps = 0
    const sleep = clock.sleep.bind(clock)
    clock.sleep = async (seconds, signal) => {
      sleeps++
      await sleep(seconds, signal)
    }
    const result = await runRunbook(runbook('  - {action: wait, for: 600}\n'), {control: control({clock}), io: new RecordingIO(), signal: noAbort()})
    expect(result.steps[0]).toMatchObject({status: 'done', message: 'waited 600 s'})
    expect(sleeps).toBe(1)
    expect(clock.now()).toBe(600)
  })
})
