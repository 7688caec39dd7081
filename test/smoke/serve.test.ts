import {spawn} from 'node:child_process'
import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {createInterface} from 'node:readline'
import {describe, expect, it} from 'vitest'
import {root, runJs} from '../helpers/cli.js'

// `sluice serve` runs until it is stopped: only a process of its own shows its address line, its
// token off stdout's --json line, and how it ends on a signal.
describe('sluice serve (spawned)', () => {
  it.each(['SIGINT', 'SIGTERM'] as const)('--json prints {url, controls, token} at once, serves the page, and %s stops it with exit 0', async (sent) => {
    const child = spawn(process.execPath, [runJs, 'serve', '--port', '0', '--controls', '--json'], {
      cwd: root,
      env: {...process.env, NO_COLOR: '1', SLUICE_STATE: mkdtempSync(join(tmpdir(), 'sluice-serve-'))},
      stdio: ['ignore', 'pipe', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (d) => (stderr += d))
    const closed = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)))
    const first = await new Promise<string>((resolve) => createInterface({input: child.stdout}).once('line', resolve))
    const started = JSON.parse(first) as {url: string; controls: boolean; token: string}
    expect(started.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/)
    expect(started.controls).toBe(true)
    expect(started.token).toMatch(/^[A-Za-z0-9_-]{32}$/)
    const page = await fetch(started.url)
    expect(page.status).toBe(200)
    expect(await page.text()).toContain('<script src="/app.js" defer></script>')
    const board = (await (await fetch(`${started.url}api/board`)).json()) as {runs: unknown[]; controls: boolean}
    expect(board).toMatchObject({runs: [], controls: true})
    child.kill(sent)
    expect(await closed, stderr).toBe(0)
  })
})
