import {spawn} from 'node:child_process'
import {existsSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {createInterface} from 'node:readline'
import type {Browser} from 'playwright-core'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {RuntimeApi} from '../../src/haproxy/runtime.js'
import {RuntimeMap} from '../../src/haproxy/maps.js'
import {isolatedEnv, runJs, sluice} from '../helpers/cli.js'
import {get, startBlueGreen, until, type BlueGreen} from '../haproxy/helpers/haproxy.js'
import {launch, recordShownEntries, screenshot, shownLags} from './helpers/browser.js'

// The bridge and a run that outlives its terminal, on a real HAProxy: a ramp started with
// `--detach` from a shell whose whole session is then killed keeps going; `sluice serve`'s page
// follows it within a second of each journal entry; a pause from the page holds it and the CLI's
// journal names who paused it; a promote from another terminal lets it finish.

let fleet: BlueGreen
let browser: Browser
const dir = mkdtempSync(join(tmpdir(), 'sluice-detached-'))
const isolated = isolatedEnv('detached')
const state = isolated.SLUICE_STATE
const env = {...isolated, NO_COLOR: '1', SLUICE_LEASE_SECONDS: '3'}
let loading = true
let load: Promise<unknown>

beforeAll(async () => {
  fleet = await startBlueGreen({blue: ['b1', 'b2'], green: 'g1', slowstartSeconds: 0})
  await until('servers up', async () => (await get(fleet.port, '/')).status === 200)
  // Steady traffic through HAProxy, as a live ramp has.
  load = Promise.all(
    [0, 1, 2].map(async () => {
      while (loading) await get(fleet.port, '/').catch(() => undefined)
    }),
  )
  browser = await launch()
})

afterAll(async () => {
  loading = false
  await load
  await browser?.close()
  await fleet?.stop()
})

/**
 * A ramp of ten 8 s bakes and no gate: what is tested here is the run outliving its session and
 * the page following it. Ten, so that the page's pause lands before green 100% on a loaded machine
 * (with five, a loaded CI's pause came during the last bake). With a gate on 2 s windows, a loaded
 * CI saw the gate fail the ramp at green 10% and the run end before the page looked (its verdict
 * was not kept; most likely the test's own servers, starved of CPU, answered late). Gates on
 * HAProxy are test/haproxy's.
 */
function rampRunbook(): string {
  const file = join(dir, 'ramp.yaml')
  writeFileSync(
    file,
    `name: detached-ramp
targets:
  haproxy:
    socket: ${fleet.haproxy.socket}
    backends: {blue: blue, green: green}
    rampMap: ${join(fleet.haproxy.dir, 'ramp.map')}
  metrics: {source: haproxy}
steps:
  - action: ramp
    set: green
    schedule: [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]
    bake: 8
    split: 'off'
`,
  )
  return file
}

/** The journal's entries as written so far. */
const journal = (runId: string) =>
  existsSync(join(state, 'runs', `${runId}.jsonl`))
    ? readFileSync(join(state, 'runs', `${runId}.jsonl`), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as {seq: number; at: string; type: string; [k: string]: unknown})
    : []

describe('a detached run on HAProxy, on the bridge page', () => {
  it('outlives the session that started it, advances on the page within a second of each entry, pauses from the page and promotes from the CLI', async () => {
    // The bridge: `sluice serve --controls`, as an operator starts it.
    const server = spawn(process.execPath, [runJs, 'serve', '--port', '0', '--controls', '--json'], {
      env: {...process.env, ...env},
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    const started = JSON.parse(await new Promise<string>((resolve) => createInterface({input: server.stdout}).once('line', resolve))) as {
      url: string
      token: string
    }
    try {
      // A shell of its own session, as a terminal is: it starts the run detached, then waits.
      const shell = spawn('bash', ['-c', `"${process.execPath}" "${runJs}" run "${rampRunbook()}" --yes --detach --json; sleep 600`], {
        env: {...process.env, ...env},
        stdio: ['ignore', 'pipe', 'pipe'],
        detached: true,
      })
      let shellErr = ''
      shell.stderr.on('data', (d) => (shellErr += d))
      // --json prints one object, over several lines: read until it parses.
      const detached = await new Promise<{runId: string; pid: number; log: string; status: string}>((resolve) => {
        let text = ''
        createInterface({input: shell.stdout}).on('line', (l) => {
          text += `${l}\n`
          try {
            resolve(JSON.parse(text) as {runId: string; pid: number; log: string; status: string})
          } catch {
            // not whole yet
          }
        })
      })
      expect(detached.status, shellErr).toBe('unfinished')
      const {runId} = detached
      // The whole session goes, as when an SSH connection drops: the run is in a session of its own.
      process.kill(-shell.pid!, 'SIGKILL')

      const page = await browser.newPage({viewport: {width: 1400, height: 1000}})
      page.on('dialog', (d) => void d.accept())
      await recordShownEntries(page)
      await page.goto(`${started.url}#/run/${runId}`)
      await page.locator('#run-status', {hasText: 'running'}).waitFor({timeout: 20_000})
      // Each new journal entry is on the page within a second of its time, as the page itself saw it.
      const before = journal(runId).length
      // Bounded, so that a run that ends or stalls first fails here, saying so, not at the test's timeout.
      const lookUntil = performance.now() + 60_000
      for (;;) {
        const entries = journal(runId)
        const fresh = entries.slice(before)
        if (fresh.length >= 6 && (await shownLags(page, fresh)).every((l) => Number.isFinite(l.lag))) {
          const lags = await shownLags(page, fresh)
          expect(Math.max(...lags.map((l) => l.lag)), `lags ${lags.map((l) => `${l.seq}: ${l.lag} ms`).join(', ')}`).toBeLessThan(1000)
          break
        }
        const ended = entries.find((e) => e.type === 'run-end')
        if (ended || performance.now() > lookUntil)
          throw new Error(
            `${ended ? `the run ended (${String(ended.outcome)}: ${String(ended.message)})` : 'not 6 new entries on the page within 60 s'} after ${fresh.length} new entries; journal: ${entries.map((e) => e.type).join(', ')}`,
          )
        await new Promise((r) => setTimeout(r, 200))
      }

      // A pause from the page, in a name the page is given, with the token.
      await page.fill('#operator', 'page-operator')
      await page.fill('#token', started.token)
      await page.click('#control-pause')
      await page.locator('#control-result', {hasText: 'the run took it up'}).waitFor({timeout: 20_000})
      const cli = await sluice(['journal', runId], {env})
      expect(cli.code, cli.stderr).toBe(0)
      expect(cli.stdout).toMatch(/pause .*page-operator/)
      // Held: the weights stay where the pause found them for a while.
      const map = new RuntimeMap(new RuntimeApi(fleet.haproxy.socket), join(fleet.haproxy.dir, 'ramp.map'))
      const weights = async () => Object.fromEntries((await map.entries()).map((e) => [e.key, e.value]))
      const held = await weights()
      await new Promise((r) => setTimeout(r, 6000))
      expect(await weights()).toEqual(held)
      expect(held.green).not.toBe('100')
      await page.locator('#run-status', {hasText: 'paused by page-operator'}).waitFor()
      await screenshot(page, 'detached-paused')
      // Another terminal lets it go on; it completes, and the page says so.
      const promote = await sluice(['promote', runId], {env})
      expect(promote.code, promote.stderr).toBe(0)
      await page.locator('#run-status', {hasText: '✓ completed'}).waitFor({timeout: 150_000})
      expect(await weights()).toEqual({blue: '0', green: '100'})
      await screenshot(page, 'detached-completed')
      await page.close()
    } finally {
      server.kill('SIGTERM')
    }
    // Its longest waits are bounded on their own (60 s, 20 s, 150 s); on a loaded machine they add up past the project's 120 s.
  }, 300_000)
})
