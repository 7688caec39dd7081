import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import type {Browser, Page} from 'playwright-core'
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'
import {LocalStore} from '../../src/local/local-store.js'
import {packageRoot} from '../../src/package-root.js'
import {journalLock} from '../../src/ports/state-store.js'
import {ControlPoller} from '../../src/state/controls.js'
import {JournalWriter, sha256, thisHost} from '../../src/state/journal.js'
import {parseRunbook} from '../../src/loader/load-runbook.js'
import type {RunEvent} from '../../src/ports/io.js'
import {serve, type Serving} from '../../src/serve/server.js'
import {rehearse} from '../../src/wiring/rehearsal.js'
import {loadRunbookFile} from '../../src/loader/load-runbook.js'
import {rehearsalHtml} from '../../src/report/rehearsal.js'
import {runStartFields} from '../helpers/journal-entries.js'
import {launch, screenshot} from './helpers/browser.js'

// `sluice serve`'s page in a real browser, over a state directory a run writes to as the test goes.

const token = 'browser-test-token-0123456789abcdef'
/** Markup and a terminal escape where a runbook's name and an operator's go: the page must show them as text. */
const hostile = '<img src=x onerror="window.__pwned=1">\u001b[31mred'

let browser: Browser
const servers: Serving[] = []
const cleanups: Array<() => Promise<void>> = []

beforeAll(async () => {
  browser = await launch()
})
afterAll(async () => {
  await browser?.close()
})
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close()
  for (const c of cleanups.splice(0)) await c()
})

async function storeWithRun() {
  const store = new LocalStore(join(mkdtempSync(join(tmpdir(), 'sluice-browser-')), 'state'))
  const runId = '20261207-031500-c0de'
  await store.append(runId, {
    seq: 1,
    at: new Date().toISOString(),
    type: 'run-start',
    ...runStartFields(runId),
    runbookName: hostile,
    operator: hostile,
    host: thisHost,
  })
  await store.acquire([journalLock(runId)], {runId, operator: 'alice', host: thisHost})
  const writer = new JournalWriter(store, runId, 2)
  await writer.record({
    type: 'plan',
    runbook: hostile,
    steps: [
      {index: 0, action: 'freeze', title: 'Freeze deploys', details: []},
      {index: 1, action: 'ramp', title: 'Ramp green back', details: ['green 10% → 25% → 50% → 100%']},
    ],
  })
  await writer.record({type: 'step-start', step: 0, title: 'Freeze deploys', at: 0})
  await writer.record({type: 'step-end', step: 0, status: 'done', message: 'frozen', at: 1})
  await writer.record({type: 'step-start', step: 1, title: 'Ramp green back', at: 1})
  cleanups.push(() => store.release([], runId))
  return {store, runId, writer}
}

async function start(store: LocalStore, controls: boolean, port = 0) {
  const s = await serve({store, host: '127.0.0.1', port, controls, token, assets: join(packageRoot, 'assets', 'serve'), pollMs: 250})
  servers.push(s)
  return s
}

/** A ramp step's change and its verdict, as a run journals them. */
async function rampTo(writer: JournalWriter, green: number, at: number) {
  const before = {blue: 100 - (green === 10 ? 0 : green / 2), green: green === 10 ? 0 : green / 2}
  const after = {blue: 100 - green, green}
  await writer.record({type: 'mutation', mutation: {step: 1, phase: 'intent', kind: 'weights', resource: 'zone Z1 app.example.com.', before, after}, at})
  await writer.record({type: 'mutation', mutation: {step: 1, phase: 'outcome', kind: 'weights', resource: 'zone Z1 app.example.com.', after, ok: true}, at})
  await writer.record({
    type: 'verdict',
    verdict: {
      step: 1,
      gate: 'error-rate ≤ 2% over 30 s (green)',
      metric: 'error-rate',
      value: 0.4,
      threshold: 2,
      unit: '%',
      outcome: 'pass',
      requests: 1203,
      bound: 2,
      at,
      context: `green ${green}%`,
    },
  })
}

const pageErrors = (page: Page) => {
  const errors: string[] = []
  page.on('pageerror', (e) => errors.push(e.message))
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text())
  })
  return errors
}

describe('sluice serve in a browser', () => {
  it('lists the runs, shows a hostile name as text, and follows a run within a second of each journal entry', async () => {
    const {store, runId, writer} = await storeWithRun()
    const s = await start(store, false)
    const page = await browser.newPage({viewport: {width: 1400, height: 1000}})
    const errors = pageErrors(page)
    await page.goto(s.url)
    await page.locator('#runs tbody tr').first().waitFor()
    const row = page.locator('#runs tbody tr').first()
    expect(await row.locator('td').nth(1).textContent()).toBe('<img src=x onerror="window.__pwned=1">\\x1b[31mred')
    expect(await row.locator('td').nth(2).textContent()).toMatch(/^▶ running/)
    expect(await page.locator('#runs img').count()).toBe(0)
    await screenshot(page, 'list')
    await page.click(`a[href="#/run/${runId}"]`)
    await page.locator('#steps li[aria-current="step"]').waitFor()
    expect(await page.locator('#steps li[aria-current="step"]').textContent()).toContain('▶ now Ramp green back')
    // Each entry reaches the page within a second of being written.
    const lags: number[] = []
    for (const [k, green] of [10, 25, 50].entries()) {
      const written = performance.now()
      await rampTo(writer, green, 10 + k * 60)
      await page.locator('#verdict-rows tbody tr', {hasText: `green ${green}%`}).waitFor({state: 'attached', timeout: 5000})
      lags.push(performance.now() - written)
    }
    expect(Math.max(...lags), `lags ${lags.map(Math.round).join(', ')} ms`).toBeLessThan(1000)
    expect(await page.locator('#weights-chart svg path.series').count()).toBe(2)
    expect(await page.locator('#changes tbody tr').count()).toBe(3)
    expect(await page.evaluate('globalThis.__pwned')).toBeUndefined()
    await screenshot(page, 'run')
    // The table view holds what the chart draws.
    await page.click('#weights-as-table')
    expect(await page.locator('#weights-rows tbody tr').last().textContent()).toContain('50%')
    // Still shown as a table after the next entry redraws the page.
    await rampTo(writer, 100, 200)
    await page.locator('#weights-rows tbody tr', {hasText: '100%'}).waitFor({state: 'attached'})
    expect(await page.locator('#weights-table').isVisible()).toBe(true)
    // The page built its journal from what changed at each entry: line for line, it is the whole
    // view the server makes from the journal read whole.
    const whole = (await (await fetch(`${s.url}api/runs/${runId}`)).json()) as {
      lines: Array<{seq: number; at: string; text: string}>
      changes: Array<{text: string; outcome: string}>
    }
    // Each change in its row with its outcome, come in a later message than its intent.
    const rows = await page.locator('#changes tbody tr').evaluateAll((trs) => trs.map((tr) => [tr.children[2].textContent, tr.children[3].textContent]))
    expect(rows).toEqual(whole.changes.map((c) => [c.text, c.outcome === 'made' ? '✓ made' : c.outcome]))
    const shown = await page.locator('#journal li').evaluateAll((items) => items.map((li) => [Number(li.getAttribute('value')), li.textContent]))
    expect(shown).toEqual(whole.lines.slice(-300).map((l) => [l.seq, `${l.at.slice(11, 19)} ${l.text}`]))
    expect(errors).toEqual([])
    await page.close()
  })

  it('draws where an assess step placed the pool on its map, the point and the edges its sentence states, with a table view', async () => {
    // The journal of a run whose assess step found the pool stuck: a rehearsal of the fixture's
    // runbook, its events journalled as a live run journals them.
    const fixture = new URL('../fixtures/runbooks/assess-before-return.yaml', import.meta.url).pathname
    const events: RunEvent[] = []
    await rehearse(
      parseRunbook(fixture, readFileSync(fixture, 'utf8')),
      {io: {confirm: async () => true, notify: (e) => void events.push(e)}, signal: new AbortController().signal, operator: 'test', approved: []},
      {pace: null, seeds: 1},
    )
    const store = new LocalStore(join(mkdtempSync(join(tmpdir(), 'sluice-browser-')), 'state'))
    const runId = '20261207-052000-a55e'
    await store.append(runId, {
      seq: 1,
      at: new Date().toISOString(),
      type: 'run-start',
      ...runStartFields(runId),
      runbookName: 'assess-before-return',
      host: thisHost,
    })
    await store.acquire([journalLock(runId)], {runId, operator: 'alice', host: thisHost})
    cleanups.push(() => store.release([], runId))
    const writer = new JournalWriter(store, runId, 2)
    for (const e of events) await writer.record(e)
    const placed = events.find((e) => e.type === 'placement') as Extract<RunEvent, {type: 'placement'}>
    const s = await start(store, false)
    const page = await browser.newPage({viewport: {width: 1400, height: 1000}})
    const errors = pageErrors(page)
    await page.goto(`${s.url}#/run/${runId}`)
    await page.locator('#map-chart svg').waitFor()
    const words = await page.locator('#map-words').textContent()
    expect(words).toContain('mailbox on the map of outlook-2026 (no-guard): 20 of 20 servers out of rotation at 1,500 rps')
    expect(words).toContain(`placed at ${placed.place.out} broken: stuck`)
    const chart = page.locator('#map-chart svg')
    expect(await chart.getAttribute('aria-label')).toContain('placed at 6 broken: stuck')
    // The point, and the region in a glyph and a word beside it: no colour alone.
    expect(await chart.locator('text.glyph.now').textContent()).toBe('●')
    expect(await chart.locator('text.legend.now').allTextContents()).toEqual(['● now: 6 broken, 1,500 rps', '✗ stuck'])
    // Each stretch where it is stuck along servers broken, as the step's sentence says.
    const stretches = placed.place.stuckOut.map(([a, b]) => `✗ stuck with ${a === b ? a : `${a}–${b}`} broken`)
    expect(stretches.length).toBeGreaterThan(0)
    for (const text of stretches) expect(await chart.locator('text', {hasText: text}).count()).toBe(1)
    await screenshot(page, 'map')
    await page.click('#map-as-table')
    const row = await page.locator('#map-rows tbody tr').first().locator('td').allTextContents()
    expect(row.slice(1, 5)).toEqual(['step 1', 'mailbox', '20 of 20', '6 broken'])
    expect(row[8]).toBe('✗ stuck')
    expect(errors).toEqual([])
    await page.close()
  })

  it('a --html report and the live page look alike in the browser: the same type, tables and verdict words', async () => {
    const rehearsal = (
      await rehearse(
        loadRunbookFile(join(packageRoot, 'runbooks', 'regional-dns-ramp.yaml')),
        {operator: 'test', io: {confirm: async () => true, notify: () => undefined}, signal: new AbortController().signal},
        {pace: null},
      )
    ).rehearsal
    const file = join(mkdtempSync(join(tmpdir(), 'sluice-report-')), 'rehearsal.html')
    writeFileSync(file, rehearsalHtml(rehearsal))
    const {store, runId, writer} = await storeWithRun()
    await rampTo(writer, 10, 10)
    const s = await start(store, false)
    const page = await browser.newPage({viewport: {width: 1400, height: 1000}})
    const errors = pageErrors(page)
    const styles = () =>
      page.evaluate(() => {
        // The page's own globals, typed here: the tests are compiled without the DOM's types.
        const w = globalThis as unknown as {
          document: {querySelector(selector: string): object | null}
          getComputedStyle(el: object): {getPropertyValue(name: string): string}
        }
        const style = (selector: string, ...names: string[]) => {
          const el = w.document.querySelector(selector)
          if (!el) return null
          const computed = w.getComputedStyle(el)
          return names.map((n) => computed.getPropertyValue(n))
        }
        return {
          body: style('body', 'font-family', 'font-size', 'color'),
          h1: style('h1', 'font-size', 'font-weight'),
          h2: style('h2', 'font-size'),
          th: style('th', 'border-bottom-width', 'border-bottom-color', 'text-align'),
          td: style('td', 'padding-left', 'border-bottom-color'),
          main: style('main', 'max-width', 'padding-left'),
          pass: style('[data-status="pass"]', 'color'),
        }
      })
    await page.goto(`file://${file}`)
    const report = await styles()
    await screenshot(page, 'report')
    await page.goto(`${s.url}#/run/${runId}`)
    await page.click('#verdicts-as-table')
    await page.locator('#verdict-rows tbody tr').first().waitFor()
    const live = await styles()
    expect(report.h1).not.toBeNull()
    expect(report.pass, 'the report marks a passing verdict as the page does').not.toBeNull()
    expect(report).toEqual(live)
    // The page's verdict is a word with its glyph, as the report's is.
    expect(await page.locator('#verdict-rows tbody tr td').last().textContent()).toMatch(/^✓ pass/)
    expect(errors).toEqual([])
    await page.close()
  })

  it('pauses a run from the page with the token, asked to confirm, and the journal names who; without the token nothing is sent', async () => {
    const {store, runId, writer} = await storeWithRun()
    const poller = new ControlPoller(
      store,
      runId,
      () => undefined,
      () => undefined,
    )
    poller.subscribe((control, effect, did) => void writer.record({type: 'control', control, effect, did}))
    await poller.start(100)
    cleanups.push(() => poller.stop())
    const s = await start(store, true)
    const page = await browser.newPage({viewport: {width: 1400, height: 1000}})
    const errors = pageErrors(page)
    const asked: string[] = []
    page.on('dialog', (d) => {
      asked.push(d.message())
      void d.accept()
    })
    await page.goto(`${s.url}#/run/${runId}`)
    await page.locator('#control-pause').waitFor()
    await page.fill('#operator', 'dave')
    await page.fill('#token', 'not-the-token')
    await page.click('#control-pause')
    await page.locator('#control-result', {hasText: 'refused (401)'}).waitFor()
    expect(await store.controls(runId)).toEqual([])
    await page.fill('#token', token)
    await page.click('#control-pause')
    await page.locator('#control-result', {hasText: 'the run took it up'}).waitFor({timeout: 15_000})
    expect(asked).toEqual([`Pause run ${runId} (${'<img src=x onerror="window.__pwned=1">\\x1b[31mred'}) as dave?`, expect.stringContaining('Pause run')])
    await page.locator('#run-status', {hasText: 'paused by dave@'}).waitFor()
    const journal = await store.read(runId)
    const control = journal.entries.find((e) => e.type === 'control')!
    expect(control).toMatchObject({effect: 'paused', control: {kind: 'pause', operator: 'dave', host: `${thisHost} (sluice serve)`}})
    expect(poller.pausedBy?.operator).toBe('dave')
    await writer.record({type: 'step-end', step: 1, status: 'held', message: 'holding at green 50% after waiting 300 s for room', at: 400})
    await writer.record({type: 'run-end', outcome: 'held', message: 'held at step 2'})
    await page.locator('#run-status', {hasText: '■ held'}).waitFor()
    expect(await page.locator('#control-pause').isDisabled()).toBe(true)
    await screenshot(page, 'held')
    expect(errors.filter((e) => !/401/.test(e))).toEqual([])
    await page.close()
  })

  it("draws the rehearsal's prediction beside the observed weights, or says why there is none", async () => {
    const store = new LocalStore(join(mkdtempSync(join(tmpdir(), 'sluice-browser-')), 'state'))
    const file = join(packageRoot, 'runbooks', 'outlook-staged-return.yaml')
    const runId = '20261207-041500-fee1'
    await store.append(runId, {
      seq: 1,
      at: new Date().toISOString(),
      type: 'run-start',
      ...runStartFields(runId),
      runbookName: 'outlook-staged-return',
      runbookFile: file,
      runbookSha256: sha256(readFileSync(file, 'utf8')),
      host: thisHost,
    })
    const writer = new JournalWriter(store, runId, 2)
    await writer.record({type: 'step-start', step: 4, title: 'Ramp mailbox', at: 0})
    await writer.record({
      type: 'mutation',
      mutation: {step: 4, phase: 'intent', kind: 'weights', resource: 'zone Z1', before: {mailbox: 0, maintenance: 100}, after: {mailbox: 1, maintenance: 99}},
      at: 1,
    })
    await writer.record({
      type: 'mutation',
      mutation: {step: 4, phase: 'outcome', kind: 'weights', resource: 'zone Z1', after: {mailbox: 1, maintenance: 99}, ok: true},
      at: 1,
    })
    await store.release([], runId)
    const s = await start(store, false)
    const page = await browser.newPage({viewport: {width: 1400, height: 1000}})
    await page.goto(`${s.url}#/run/${runId}`)
    await page.locator('#prediction', {hasText: 'Rehearsed from its start against outlook-recovery: completed in'}).waitFor({timeout: 20_000})
    await page.locator('#weights-chart path.predicted').first().waitFor({state: 'attached'})
    expect(await page.locator('#weights-chart text.legend.predicted').allTextContents()).toEqual(['○ mailbox predicted: 100%', '○ maintenance predicted: 0%'])
    await screenshot(page, 'prediction')
    // A run whose runbook is not on this machine says so.
    const other = await storeWithRun()
    const s2 = await start(other.store, false)
    await page.goto(`${s2.url}#/run/${other.runId}`)
    await page.locator('#prediction', {hasText: 'No prediction: its runbook /tmp/x.yaml cannot be read here'}).waitFor()
    await page.close()
  })

  it('is used by keyboard alone: from the list to a run, the table view, and a control, each reached with Tab', async () => {
    const {store, runId} = await storeWithRun()
    const s = await start(store, true)
    const page = await browser.newPage()
    await page.goto(s.url)
    await page.locator('#runs tbody tr').first().waitFor()
    // Tab until the run's link has the focus, and follow it with Enter.
    const focusOn = async (selector: string) => {
      for (let k = 0; k < 40; k++) {
        await page.keyboard.press('Tab')
        if (await page.locator(selector).evaluate((e) => e === (e.ownerDocument as unknown as {activeElement: unknown}).activeElement)) return
      }
      throw new Error(`Tab never reached ${selector}`)
    }
    await focusOn(`#runs a[href="#/run/${runId}"]`)
    await page.keyboard.press('Enter')
    await page.locator('#controls-panel').waitFor()
    await focusOn('#weights-as-table')
    await page.keyboard.press('Enter')
    expect(await page.locator('#weights-table').isVisible()).toBe(true)
    expect(await page.locator('#weights-as-table').getAttribute('aria-pressed')).toBe('true')
    await focusOn('#operator')
    await page.keyboard.type('erin')
    await focusOn('#control-pause')
    expect(await page.locator('#control-pause').isEnabled()).toBe(true)
    await page.close()
  })

  it('reconnects when serve is restarted, and shows what the run wrote meanwhile once, with no row twice', async () => {
    const {store, runId, writer} = await storeWithRun()
    const first = await start(store, false)
    const page = await browser.newPage()
    await page.goto(`${first.url}#/run/${runId}`)
    await page.locator('#steps li[aria-current="step"]').waitFor()
    await rampTo(writer, 10, 10)
    await page.locator('#verdict-rows tbody tr', {hasText: 'green 10%'}).waitFor({state: 'attached'})
    const {port} = new URL(first.url)
    await first.close()
    servers.splice(servers.indexOf(first), 1)
    await page.locator('#connection', {hasText: 'reconnecting'}).waitFor()
    await rampTo(writer, 25, 70)
    await start(store, false, Number(port))
    await page.locator('#verdict-rows tbody tr', {hasText: 'green 25%'}).waitFor({state: 'attached', timeout: 10_000})
    await page.locator('#connection', {hasText: 'live'}).waitFor()
    expect(await page.locator('#verdict-rows tbody tr').count()).toBe(2)
    expect(await page.locator('#changes tbody tr').count()).toBe(2)
    await page.close()
  })
})
