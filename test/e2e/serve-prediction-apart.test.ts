import {spawn} from 'node:child_process'
import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {createInterface} from 'node:readline'
import {describe, expect, it} from 'vitest'
import {LocalStore} from '../../src/local/local-store.js'
import {packageRoot} from '../../src/package-root.js'
import {journalLock} from '../../src/ports/state-store.js'
import {JournalWriter, sha256, thisHost} from '../../src/state/journal.js'
import {root, runJs} from '../helpers/cli.js'
import {runStartFields} from '../helpers/journal-entries.js'

// The rehearsal behind a run's prediction can take seconds of CPU (a pool of thousands of servers):
// `sluice serve` works it out on a thread of its own, so every page's stream goes on within a
// second of each entry meanwhile. Only the compiled serve has the thread to start.

/** The Outlook staged return against its recovery scenario grown to 40,000 servers: a rehearsal of seconds. */
function largeRunbook(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-large-'))
  const scenario = readFileSync(join(packageRoot, 'scenarios', 'outlook-recovery.yaml'), 'utf8')
    .replace(/^name: outlook-recovery$/m, 'name: outlook-recovery-large')
    .replace(/^ {4}servers: 20$/m, '    servers: 40000')
    .replace(/^ {2}rps: 1500$/m, '  rps: 3000000')
    .replace(/^ {4}servers: 6$/m, '    servers: 12000')
  expect(scenario).toContain('servers: 40000')
  writeFileSync(join(dir, 'large.yaml'), scenario)
  const runbook = readFileSync(join(packageRoot, 'runbooks', 'outlook-staged-return.yaml'), 'utf8').replace(
    /^ {2}scenario: outlook-recovery$/m,
    '  scenario: ./large.yaml',
  )
  expect(runbook).toContain('scenario: ./large.yaml')
  writeFileSync(join(dir, 'runbook.yaml'), runbook)
  return join(dir, 'runbook.yaml')
}

describe('sluice serve rehearses a prediction apart from its streams', () => {
  it('a run page asked for its prediction still gets each journal entry within a second while the rehearsal runs', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'sluice-serve-apart-')), 'state')
    const store = new LocalStore(dir)
    const file = largeRunbook()
    const runId = '20261207-060000-a9a7'
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
    await store.acquire([journalLock(runId)], {runId, operator: 'alice', host: thisHost})
    const writer = new JournalWriter(store, runId, 2)
    const child = spawn(process.execPath, [runJs, 'serve', '--port', '0', '--json', '--state', dir], {cwd: root, stdio: ['ignore', 'pipe', 'pipe']})
    try {
      const {url} = JSON.parse(await new Promise<string>((resolve) => createInterface({input: child.stdout}).once('line', resolve))) as {url: string}
      // The run's stream, each message's last entry noted as it comes.
      const seen = new Map<number, number>()
      const stream = await fetch(`${url}api/runs/${runId}/events`)
      const reader = stream.body!.getReader()
      let buffered = ''
      void (async () => {
        for (;;) {
          const {value, done} = await reader.read()
          if (done) return
          buffered += new TextDecoder().decode(value)
          for (const m of buffered.matchAll(/^id: (\d+)$/gm)) if (!seen.has(Number(m[1]))) seen.set(Number(m[1]), performance.now())
        }
      })()
      const asked = performance.now()
      let answered = 0
      const prediction = fetch(`${url}api/runs/${runId}/prediction`)
        .then((r) => r.json() as Promise<{outcome?: string; none?: string}>)
        .then((p) => {
          answered = performance.now()
          return p
        })
      // An entry every 300 ms until the prediction has come, each timed to its message.
      const lags: number[] = []
      while (answered === 0 && performance.now() - asked < 120_000) {
        await writer.record({type: 'progress', step: 0, message: `entry ${writer.nextSeq}`, at: 0})
        const seq = writer.nextSeq - 1
        const written = performance.now()
        while (!seen.has(seq) && performance.now() - written < 10_000) await new Promise((r) => setTimeout(r, 10))
        lags.push((seen.get(seq) ?? Infinity) - written)
        await new Promise((r) => setTimeout(r, 300))
      }
      const p = await prediction
      expect(p.outcome, JSON.stringify(p)).toBe('completed')
      // The rehearsal took long enough to matter, and no entry waited for it.
      expect(answered - asked).toBeGreaterThan(2000)
      expect(lags.length).toBeGreaterThan(3)
      expect(Math.max(...lags), `lags ${lags.map(Math.round).join(', ')} ms`).toBeLessThan(1000)
      await reader.cancel()
    } finally {
      child.kill('SIGTERM')
      await store.release([], runId)
    }
  }, 180_000)
})
