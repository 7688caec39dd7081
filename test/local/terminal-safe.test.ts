import {mkdirSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {createServer} from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {maxAnswerBytes, RuntimeApi} from '../../src/haproxy/runtime.js'
import {inProcess as sluice} from '../helpers/command.js'

describe('what sluice reads from outside cannot drive the terminal or fill the heap', () => {
  it("sluice locks prints an escape sequence in a lock file's operator name written out, never raw (in process)", async () => {
    const state = join(mkdtempSync(join(tmpdir(), 'sluice-escapes-')), 'state')
    mkdirSync(join(state, 'locks'), {recursive: true})
    const evil = '\u001b[2J\u001b[31mroot\u001b]0;owned\u0007'
    writeFileSync(
      join(state, 'locks', 'route53_Z1.json'),
      JSON.stringify({
        resource: 'route53:Z1',
        runId: '20261130-054012-a1b2',
        operator: evil,
        host: 'h\u001b[1Aost',
        since: '2026-11-30T05:40:12.000Z',
        pid: 1,
        heartbeat: '2026-11-30T05:40:12.000Z',
        leaseSeconds: 30,
        lockId: '0123456789abcdef',
        version: 'v1',
      }),
    )
    const listed = await sluice(['locks'], {env: {SLUICE_STATE: state}})
    expect(listed.code, listed.stderr).toBe(0)
    expect(listed.stdout).toContain('\\x1b[2J\\x1b[31mroot\\x1b]0;owned\\x07@h\\x1b[1Aost pid 1')
    expect(listed.stdout + listed.stderr).not.toMatch(/[\u001b\u0007]/)
  }, 30_000)

  it('a Runtime API socket that streams without end is cut at the cap with a clear error, in bounded memory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-stream-'))
    const path = join(dir, 'admin.sock')
    const chunk = Buffer.alloc(64 * 1024, 'x')
    const server = createServer((socket) => {
      const pump = () => {
        while (socket.write(chunk)) if (socket.destroyed) return
      }
      socket.on('drain', pump)
      socket.on('error', () => undefined)
      pump()
    })
    await new Promise<void>((r) => server.listen(path, r))
    try {
      const before = process.memoryUsage().rss
      const started = performance.now()
      await expect(new RuntimeApi(path, 60_000).send('show stat')).rejects.toThrow(
        `answered more than ${maxAnswerBytes / 1024 / 1024} MiB; sluice stopped reading`,
      )
      expect(performance.now() - started).toBeLessThan(20_000)
      expect(process.memoryUsage().rss - before, 'bytes held after the cap').toBeLessThan(200 * 1024 * 1024)
    } finally {
      server.close()
      rmSync(dir, {recursive: true, force: true})
    }
  }, 60_000)
})
