/**
 * `sluice serve` on the bridge, measured (issue 50): `npm run bench:serve [-- --minutes M]`.
 * A state directory with a run this process writes as a live run would, `sluice serve` spawned
 * over it, and Debian's Chromium (playwright-core) on its page. Prints JSON lines like
 * bench/figures.ts:
 * - the run page's first paint (first contentful paint) and the time until its steps are drawn;
 * - the time from a journal entry being written to the page showing it (median, 90th, worst of 40);
 * - the list with 500 runs in the store: its JSON, and the page until every row is drawn;
 * - serve's memory (resident set) and CPU while a rehearsal's journal (the Outlook staged return's
 *   events, over and over) streams ten entries a second into a page that follows it, for M minutes
 *   (default 2; the figure is an hour: --minutes 60), with its CPU in the first and last minute.
 */
import {spawn} from 'node:child_process'
import {mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {createInterface} from 'node:readline'
import {chromium, type Page} from 'playwright-core'
import {LocalStore} from '../src/local/local-store.js'
import {packageRoot} from '../src/package-root.js'
import {journalLock} from '../src/ports/state-store.js'
import {parseRunbook} from '../src/loader/load-runbook.js'
import type {RunEvent} from '../src/ports/io.js'
import {JournalWriter, thisHost} from '../src/state/journal.js'
import {rehearse} from '../src/wiring/rehearsal.js'

function emit(name: string, value: number, unit: string): void {
  process.stdout.write(`${JSON.stringify({name, value: Number(value.toPrecision(4)), unit})}\n`)
}

const quantile = (xs: number[], q: number): number => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]

const startFields = (runId: string, runbookName: string) => ({
  runId,
  runbookName,
  runbookSha256: 'bench',
  runbookFile: '/bench/runbook.yaml',
  operator: 'bench',
  host: thisHost,
  pid: process.pid,
  resources: [],
})

/** The run's first entry and its lock, as a live run's process takes it. */
async function liveRun(store: LocalStore, runId: string): Promise<JournalWriter> {
  await store.append(runId, {seq: 1, at: new Date().toISOString(), type: 'run-start', ...startFields(runId, 'outlook-staged-return')})
  await store.acquire([journalLock(runId)], {runId, operator: 'bench', host: thisHost})
  return new JournalWriter(store, runId, 2)
}

/**
 * A rehearsal's journal, as it would stream into a page: the Outlook staged return rehearsed once,
 * every event it journals (plan, steps, changes, gates' verdicts, progress), written again and
 * again in order, as long as the bench runs.
 */
async function rehearsalEvents(): Promise<RunEvent[]> {
  const file = join(packageRoot, 'runbooks', 'outlook-staged-return.yaml')
  const runbook = parseRunbook(file, readFileSync(file, 'utf8'))
  const events: RunEvent[] = []
  await rehearse(
    runbook,
    {
      io: {confirm: async () => true, notify: (event) => void events.push(event)},
      signal: new AbortController().signal,
      operator: 'bench',
      approved: runbook.steps.filter((s) => s.action === 'approve').map((s) => s.index),
    },
    {pace: null, seeds: 1},
  )
  return events.filter((e) => e.type !== 'run-end')
}

let tick = 0
let events: RunEvent[] = []
async function entry(writer: JournalWriter): Promise<void> {
  await writer.record(events[tick++ % events.length])
}

const lastEntryShown = async (page: Page, seq: number) =>
  page.waitForFunction(
    (want: number) =>
      Number(/last entry (\d+)\./.exec((globalThis as unknown as {document: {body: {innerText: string}}}).document.body.innerText)?.[1] ?? 0) >= want,
    seq,
    {polling: 'raf', timeout: 30_000},
  )

/** Resident memory and CPU seconds of a process, from /proc. */
function usage(pid: number): {rssMb: number; cpuSeconds: number} {
  const rss = Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
  return {rssMb: rss, cpuSeconds: (Number(fields[11]) + Number(fields[12])) / 100}
}

async function main(): Promise<void> {
  const args = process.argv.slice(2)
  const minutes = args.includes('--minutes') ? Number(args[args.indexOf('--minutes') + 1]) : 2
  const dir = join(mkdtempSync(join(tmpdir(), 'sluice-bench-serve-')), 'state')
  const store = new LocalStore(dir)
  const runId = '20261207-040000-be0c'
  events = await rehearsalEvents()
  emit('serve.rehearsal.entries', events.length, 'count')
  const writer = await liveRun(store, runId)
  // The page opens on a run under way.
  for (let k = 0; k < 20; k++) await entry(writer)
  const server = spawn(process.execPath, [join(packageRoot, 'bin', 'run.js'), 'serve', '--port', '0', '--json', '--state', dir], {
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  const {url} = JSON.parse(await new Promise<string>((resolve) => createInterface({input: server.stdout}).once('line', resolve))) as {url: string}
  const browser = await chromium.launch({executablePath: process.env.SLUICE_CHROMIUM ?? '/usr/bin/chromium', args: ['--no-sandbox']})
  try {
    // First paint and the run drawn, on a fresh page each time.
    const paints: number[] = []
    const drawn: number[] = []
    for (let k = 0; k < 5; k++) {
      const page = await browser.newPage()
      const t0 = performance.now()
      await page.goto(`${url}#/run/${runId}`)
      await page.locator('#steps li').first().waitFor()
      drawn.push(performance.now() - t0)
      paints.push(
        await page.evaluate(
          () =>
            (globalThis as unknown as {performance: {getEntriesByName(n: string): Array<{startTime: number}>}}).performance.getEntriesByName(
              'first-contentful-paint',
            )[0]?.startTime ?? NaN,
        ),
      )
      await page.close()
    }
    emit('serve.run-page.first-contentful-paint.median', quantile(paints, 0.5), 'ms')
    emit('serve.run-page.steps-drawn.median', quantile(drawn, 0.5), 'ms')

    // From an entry written to the page showing it.
    const page = await browser.newPage()
    await page.goto(`${url}#/run/${runId}`)
    await page.locator('#steps li').first().waitFor()
    const lags: number[] = []
    for (let k = 0; k < 40; k++) {
      await entry(writer)
      const written = performance.now()
      await lastEntryShown(page, writer.nextSeq - 1)
      lags.push(performance.now() - written)
      await new Promise((r) => setTimeout(r, 250))
    }
    emit('serve.update-latency.median', quantile(lags, 0.5), 'ms')
    emit('serve.update-latency.p90', quantile(lags, 0.9), 'ms')
    emit('serve.update-latency.max', Math.max(...lags), 'ms')

    // serve's memory and CPU while the rehearsal streams ten entries a second into the page
    // following it, sampled each minute: bounded means the last minutes cost what the first did.
    const start = usage(server.pid!)
    let most = start.rssMb
    const end = Date.now() + minutes * 60_000
    let written = 0
    let minute = {at: Date.now(), ...start}
    const perMinute: Array<{rssMb: number; cpuSeconds: number}> = []
    while (Date.now() < end) {
      await entry(writer)
      written++
      await new Promise((r) => setTimeout(r, 100))
      if (Date.now() - minute.at >= 60_000) {
        const now = usage(server.pid!)
        perMinute.push({rssMb: now.rssMb, cpuSeconds: now.cpuSeconds - minute.cpuSeconds})
        most = Math.max(most, now.rssMb)
        minute = {at: Date.now(), ...now}
        // Said as it goes: a long run that is cut short still leaves its figures.
        emit(`serve.stream.minute-${perMinute.length}.rss`, now.rssMb, 'MB')
        emit(`serve.stream.minute-${perMinute.length}.cpu`, perMinute.at(-1)!.cpuSeconds, 's')
      }
    }
    await lastEntryShown(page, writer.nextSeq - 1)
    const after = usage(server.pid!)
    emit('serve.stream.minutes', minutes, 'min')
    emit('serve.stream.entries-written', written, 'count')
    emit('serve.stream.rss.start', start.rssMb, 'MB')
    emit('serve.stream.rss.max', Math.max(most, after.rssMb), 'MB')
    emit('serve.stream.rss.end', after.rssMb, 'MB')
    emit('serve.stream.cpu-per-minute', (after.cpuSeconds - start.cpuSeconds) / minutes, 's')
    if (perMinute.length > 0) {
      emit('serve.stream.cpu.first-minute', perMinute[0].cpuSeconds, 's')
      emit('serve.stream.cpu.last-minute', perMinute.at(-1)!.cpuSeconds, 's')
    }
    await page.close()

    // The list with 500 runs in the store.
    for (let k = 0; k < 499; k++) {
      const id = `20261206-${String(1000000 + k).slice(1)}-${(k % 65536).toString(16).padStart(4, '0')}`
      await store.append(id, {seq: 1, at: new Date().toISOString(), type: 'run-start', ...startFields(id, `runbook-${k % 7}`)})
      await store.append(id, {seq: 2, at: new Date().toISOString(), type: 'run-end', outcome: k % 5 === 0 ? 'gate-failed' : 'completed', message: ''})
      await store.release([], id)
    }
    const api: number[] = []
    for (let k = 0; k < 5; k++) {
      const t0 = performance.now()
      const board = (await (await fetch(`${url}api/board`)).json()) as {runs: unknown[]}
      api.push(performance.now() - t0)
      if (board.runs.length !== 500) throw new Error(`the board lists ${board.runs.length} runs, not 500`)
    }
    emit('serve.board-500-runs.api.median', quantile(api, 0.5), 'ms')
    const list = await browser.newPage()
    const t0 = performance.now()
    await list.goto(url)
    await list.locator('#runs tbody tr').nth(499).waitFor()
    emit('serve.board-500-runs.page-drawn', performance.now() - t0, 'ms')
    await list.close()
  } finally {
    await browser.close()
    server.kill('SIGTERM')
    await store.release([], runId)
  }
}

await main().catch((error: unknown) => {
  process.stderr.write(`bench:serve failed: ${(error as Error).stack ?? String(error)}\n`)
  process.exit(1)
})
