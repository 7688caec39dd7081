import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, afterEach, describe, expect, it} from 'vitest'
import {LocalStore} from '../../src/local/local-store.js'
import {packageRoot} from '../../src/package-root.js'
import {journalLock} from '../../src/ports/state-store.js'
import {ControlPoller} from '../../src/state/controls.js'
import {JournalWriter, thisHost} from '../../src/state/journal.js'
import {serve, type Serving} from '../../src/serve/server.js'
import {runStartFields} from '../helpers/journal-entries.js'
import {lineStyles} from '../../src/report/chart.js'
import {lookCss, type ChartLook} from '../../src/report/look.js'
import {PALETTE} from '../../src/report/svg.js'

const token = 'a-token-for-the-test-0123456789'
const servers: Serving[] = []
const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close()
  for (const c of cleanups.splice(0)) await c()
})
afterAll(async () => undefined)

const hostile = '<script>alert(1)</script>\u001b[31mred'
/** As the store reads it back: control characters escaped (src/input/terminal-safe.ts), markup as it was. */
const hostileRead = '<script>alert(1)</script>\\x1b[31mred'

/** A store with one running run (this process holds its journal lock, as a run's process does) and one ended. */
async function storeWithRuns() {
  const store = new LocalStore(join(mkdtempSync(join(tmpdir(), 'sluice-serve-')), 'state'))
  const running = '20261207-030000-aaaa'
  const ended = '20261207-020000-bbbb'
  await store.append(running, {
    seq: 1,
    at: new Date().toISOString(),
    type: 'run-start',
    ...runStartFields(running),
    runbookName: hostile,
    operator: 'alice',
    host: thisHost,
  })
  await store.acquire([journalLock(running)], {runId: running, operator: 'alice', host: thisHost})
  const writer = new JournalWriter(store, running, 2)
  await writer.record({type: 'plan', runbook: hostile, steps: [{index: 0, action: 'ramp', title: 'Ramp green', details: ['green 10% → 100%']}]})
  await writer.record({type: 'step-start', step: 0, title: 'Ramp green', at: 0})
  await store.append(ended, {seq: 1, at: new Date().toISOString(), type: 'run-start', ...runStartFields(ended), operator: 'bob', host: thisHost})
  await store.append(ended, {seq: 2, at: new Date().toISOString(), type: 'run-end', outcome: 'completed', message: 'done'})
  // Its process let go when it ended.
  await store.release([], ended)
  cleanups.push(() => store.release([], running))
  return {store, running, ended, writer}
}

async function start(store: LocalStore, options: {controls?: boolean; host?: string} = {}) {
  const s = await serve({
    store,
    host: options.host ?? '127.0.0.1',
    port: 0,
    controls: options.controls ?? false,
    token,
    assets: join(packageRoot, 'assets', 'serve'),
    pollMs: 50,
  })
  servers.push(s)
  return s
}

/** Reads an event stream's messages as they come, each message's data parsed. */
function streamOf(url: string) {
  const controller = new AbortController()
  const messages: Array<{id: string | null; data: Record<string, unknown>}> = []
  const waiters: Array<() => void> = []
  const done = (async () => {
    const res = await fetch(url, {signal: controller.signal})
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/)
    const reader = res.body!.getReader()
    let text = ''
    for (;;) {
      const {value, done: end} = await reader.read()
      if (end) return
      text += new TextDecoder().decode(value)
      let cut: number
      while ((cut = text.indexOf('\n\n')) >= 0) {
        const block = text.slice(0, cut)
        text = text.slice(cut + 2)
        const data = /^data: (.*)$/m.exec(block)?.[1]
        if (data) messages.push({id: /^id: (.*)$/m.exec(block)?.[1] ?? null, data: JSON.parse(data) as Record<string, unknown>})
        for (const w of waiters.splice(0)) w()
      }
    }
  })().catch(() => undefined)
  return {
    messages,
    async next(count: number) {
      while (messages.length < count) await new Promise<void>((r) => waiters.push(r))
      return messages[count - 1]
    },
    close: async () => {
      controller.abort()
      await done
    },
  }
}

describe('sluice serve, in process', () => {
  it('lists every run with its status, the freeze and the locks; a hostile runbook name comes back as the same string', async () => {
    const {store, running, ended} = await storeWithRuns()
    await store.freeze.set({by: 'carol', reason: 'incident 42', since: '2026-12-07T02:00:00.000Z'})
    const s = await start(store)
    const board = (await (await fetch(`${s.url}api/board`)).json()) as {
      runs: Array<Record<string, unknown>>
      freeze: {by: string}
      locks: Array<{resource: string}>
      controls: boolean
    }
    expect(board.runs.map((r) => [r.runId, r.status])).toEqual([
      [running, 'running'],
      [ended, 'completed'],
    ])
    expect(board.runs[0]).toMatchObject({runbook: hostileRead, operator: 'alice', step: 'step 1: Ramp green'})
    expect(board.freeze.by).toBe('carol')
    expect(board.locks.map((l) => l.resource)).toEqual([journalLock(running)])
    expect(board.controls).toBe(false)
  })

  it('streams a run: its view at once, then again after each journal entry, each with the last entry number as its id', async () => {
    const {store, running, writer} = await storeWithRuns()
    const s = await start(store)
    const stream = streamOf(`${s.url}api/runs/${running}/events`)
    try {
      const first = await stream.next(1)
      expect(first.id).toBe('3')
      expect(first.data).toMatchObject({runId: running, runbook: hostileRead, lastSeq: 3, life: {status: 'running'}})
      await writer.record({
        type: 'mutation',
        mutation: {step: 0, phase: 'intent', kind: 'weights', resource: 'zone Z1', before: {blue: 100, green: 0}, after: {blue: 90, green: 10}},
        at: 1,
      })
      await writer.record({
        type: 'mutation',
        mutation: {step: 0, phase: 'outcome', kind: 'weights', resource: 'zone Z1', after: {blue: 90, green: 10}, ok: true},
        at: 1,
      })
      const second = await stream.next(2)
      // The two entries may come as one view or as two: the last one says both.
      const last = stream.messages.at(-1)!.data.lastSeq === 5 ? stream.messages.at(-1)! : await stream.next(3)
      expect(Number(second.id)).toBeGreaterThan(3)
      expect(last.data).toMatchObject({lastSeq: 5})
      expect((last.data.changes as unknown[]).length).toBe(1)
      expect(last.data.weights).toEqual([expect.objectContaining({shares: {blue: 90, green: 10}})])
      // The first message is the whole view; each after it carries only the lines of the entries
      // after the one it follows on from, and nothing is sent while nothing moves.
      expect(first.data).toMatchObject({since: 0, keep: {lines: 500, verdicts: 2000}})
      expect([...new Set((first.data.lines as Array<{seq: number}>).map((l) => l.seq))]).toEqual([1, 2, 3])
      for (const [before, after] of stream.messages.slice(0, -1).map((m, i) => [m, stream.messages[i + 1]] as const)) {
        expect(after.data.since).toBe(before.data.lastSeq)
        const seqs = (after.data.lines as Array<{seq: number}>).map((l) => l.seq)
        expect(seqs.length).toBeGreaterThan(0)
        expect(seqs.every((q) => q > (before.data.lastSeq as number) && q <= (after.data.lastSeq as number))).toBe(true)
      }
      const count = stream.messages.length
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(stream.messages).toHaveLength(count)
    } finally {
      await stream.close()
    }
  })

  it('read-only unless started with --controls: a control is refused 403 and nothing reaches the store', async () => {
    const {store, running} = await storeWithRuns()
    const s = await start(store)
    const r = await fetch(`${s.url}api/runs/${running}/control`, {
      method: 'POST',
      headers: {'content-type': 'application/json', authorization: `Bearer ${token}`},
      body: JSON.stringify({kind: 'pause', operator: 'dave'}),
    })
    expect(r.status).toBe(403)
    expect(((await r.json()) as {error: string}).error).toMatch(/read-only: start `sluice serve --controls`/)
    expect(await store.controls(running)).toEqual([])
  })

  it('with --controls, a control without the token, or with a wrong one, is refused 401 and nothing reaches the store', async () => {
    const {store, running} = await storeWithRuns()
    const s = await start(store, {controls: true})
    for (const authorization of [undefined, 'Bearer wrong', `Bearer ${token}x`, token]) {
      const r = await fetch(`${s.url}api/runs/${running}/control`, {
        method: 'POST',
        headers: {'content-type': 'application/json', ...(authorization ? {authorization} : {})},
        body: JSON.stringify({kind: 'pause', operator: 'dave'}),
      })
      expect(r.status, String(authorization)).toBe(401)
    }
    expect(await store.controls(running)).toEqual([])
  })

  it('with the token, a pause goes through the store as `sluice pause` sends it, in the name the page gave, and the run takes it up', async () => {
    const {store, running, writer} = await storeWithRuns()
    // The running process's side, as a live run has it: it reads controls and journals what it did.
    const poller = new ControlPoller(
      store,
      running,
      () => undefined,
      () => undefined,
    )
    poller.subscribe((control, effect, did) => void writer.record({type: 'control', control, effect, did}))
    await poller.start(50)
    cleanups.push(() => poller.stop())
    const s = await start(store, {controls: true})
    const r = await fetch(`${s.url}api/runs/${running}/control`, {
      method: 'POST',
      headers: {'content-type': 'application/json', authorization: `Bearer ${token}`},
      body: JSON.stringify({kind: 'pause', operator: 'dave <b>'}),
    })
    expect(r.status).toBe(200)
    const sent = (await r.json()) as {control: {operator: string; host: string; kind: string}; taken: {effect: string} | null}
    expect(sent.control).toMatchObject({kind: 'pause', operator: 'dave <b>', host: `${thisHost} (sluice serve)`})
    expect(sent.taken?.effect).toBe('paused')
    expect(poller.pausedBy?.operator).toBe('dave <b>')
    const view = (await (await fetch(`${s.url}api/runs/${running}`)).json()) as {pausedBy: string; controls: Array<{by: string; did: string}>}
    expect(view.pausedBy).toMatch(/^dave <b>@/)
    expect(view.controls).toEqual([expect.objectContaining({by: `dave <b>@${thisHost} (sluice serve)`})])
  })

  it('refuses a control it cannot send: no name, an unknown kind, a body that is not JSON, a run not running', async () => {
    const {store, running, ended} = await storeWithRuns()
    const s = await start(store, {controls: true})
    const post = (id: string, body: string, type = 'application/json') =>
      fetch(`${s.url}api/runs/${id}/control`, {method: 'POST', headers: {'content-type': type, authorization: `Bearer ${token}`}, body})
    expect((await post(running, JSON.stringify({kind: 'pause', operator: '  '}))).status).toBe(400)
    expect((await post(running, JSON.stringify({kind: 'delete', operator: 'dave'}))).status).toBe(400)
    expect((await post(running, 'kind=pause', 'application/x-www-form-urlencoded')).status).toBe(415)
    expect((await post(running, '{"kind":')).status).toBe(400)
    expect((await post(running, JSON.stringify({kind: 'pause', operator: 'x'.repeat(5000)}))).status).toBe(413)
    const notRunning = await post(ended, JSON.stringify({kind: 'pause', operator: 'dave'}))
    expect(notRunning.status).toBe(409)
    expect(((await notRunning.json()) as {error: string}).error).toMatch(/is not running: it ended completed/)
    expect(await store.controls(running)).toEqual([])
    expect(await store.controls(ended)).toEqual([])
  })

  it('answers only for the loopback address it listens on (a rebound name is refused), and every answer carries its content security policy', async () => {
    const {store} = await storeWithRuns()
    const s = await start(store)
    const {port} = new URL(s.url)
    const asHost = (host: string) =>
      new Promise<number>((resolve, reject) => {
        // fetch will not let a Host header be set: a raw request does.
        import('node:http')
          .then(({request}) => {
            const req = request({host: '127.0.0.1', port, path: '/api/board', headers: {host}}, (res) => {
              res.resume()
              resolve(res.statusCode!)
            })
            req.on('error', reject)
            req.end()
          })
          .catch(reject)
      })
    expect(await asHost(`evil.example:${port}`)).toBe(403)
    expect(await asHost(`localhost:${port}`)).toBe(200)
    for (const path of ['', 'app.js', 'api/board', 'api/runs/nonsense']) {
      const r = await fetch(`${s.url}${path}`)
      expect(r.headers.get('content-security-policy'), path).toMatch(/default-src 'none'; script-src 'self'/)
      expect(r.headers.get('x-content-type-options')).toBe('nosniff')
    }
    expect((await fetch(`${s.url}api/runs/nonsense`)).status).toBe(404)
  })

  it("serves the look every --html report carries: the same stylesheet, and the terminal's dashes and glyphs for its charts", async () => {
    const {store} = await storeWithRuns()
    const s = await start(store)
    const css = await fetch(`${s.url}look.css`)
    expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8')
    expect(await css.text()).toBe(lookCss())
    const look = (await (await fetch(`${s.url}look.json`)).json()) as ChartLook
    expect(look.series.map((l) => [l.dash, l.glyph])).toEqual([...lineStyles.left, ...lineStyles.right].map((l) => [l.dash, l.glyph]))
    expect(look.series.slice(0, PALETTE.length).map((l) => l.color)).toEqual(PALETTE)
    expect(await (await fetch(s.url)).text()).toContain('<link rel="stylesheet" href="/look.css" />')
  })

  it('off loopback, every read needs the token', async () => {
    const {store} = await storeWithRuns()
    const s = await start(store, {host: '0.0.0.0'})
    const {port} = new URL(s.url)
    expect((await fetch(`http://127.0.0.1:${port}/api/board`)).status).toBe(401)
    expect((await fetch(`http://127.0.0.1:${port}/api/board`, {headers: {authorization: `Bearer ${token}`}})).status).toBe(200)
    // The page itself holds no data: it loads, and asks for the token.
    expect((await fetch(`http://127.0.0.1:${port}/`)).status).toBe(200)
  })
})
