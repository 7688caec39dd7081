import {chmodSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {createServer} from 'node:http'
import type {AddressInfo} from 'node:net'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {PrometheusMetrics} from '../../src/prometheus/metrics.js'
import {CommandHooks} from '../../src/local/command-hooks.js'
import {FakeClock} from '../engine/fakes.js'

const dir = mkdtempSync(join(tmpdir(), 'sluice-hooks-'))
const script = (name: string, body: string) => {
  const file = join(dir, name)
  writeFileSync(file, `#!/bin/sh\n${body}\n`)
  chmodSync(file, 0o755)
  return file
}
const target = {id: '10.0.1.10:443', ip: '10.0.1.10', port: 443, health: 'healthy' as const}

describe('restart and remediation hooks', () => {
  const hooks = new CommandHooks()

  it('gets the target as arguments and environment, with nothing passed through a shell', async () => {
    const out = join(dir, 'args.txt')
    const hook = script('record.sh', `printf '%s|' "$@" > '${out}'; printf '%s %s %s %s' "$SLUICE_HOOK" "$SLUICE_TARGET_ID" "$SLUICE_TARGET_IP" "$SLUICE_TARGET_PORT" >> '${out}'`)
    // A target id with shell syntax in it stays one harmless argument.
    await hooks.run('restart', {command: [hook, '--host', '{ip}', 'x{port}y', '{id}'], timeoutSeconds: 5}, {...target, id: '10.0.1.10:443;touch /tmp/pwned'})
    expect(readFileSync(out, 'utf8')).toBe('--host|10.0.1.10|x443y|10.0.1.10:443;touch /tmp/pwned|restart 10.0.1.10:443;touch /tmp/pwned 10.0.1.10 443')
  })

  it('a non-zero exit fails, naming the hook and its last line of output', async () => {
    const hook = script('fail.sh', 'echo "starting"; echo "mailbox service did not come up" >&2; exit 3')
    await expect(hooks.run('remediate', {command: [hook], timeoutSeconds: 5}, target)).rejects.toThrow(/^remediate hook .*fail\.sh exited 3: mailbox service did not come up$/)
  })

  it('a hook that runs past its timeout is stopped and fails', async () => {
    const hook = script('slow.sh', 'sleep 30')
    const started = Date.now()
    await expect(hooks.run('restart', {command: [hook], timeoutSeconds: 0.3}, target)).rejects.toThrow(/timed out after 0\.3 s/)
    expect(Date.now() - started).toBeLessThan(10_000)
  })

  it('a command that does not exist fails clearly', async () => {
    await expect(hooks.run('restart', {command: [join(dir, 'missing')], timeoutSeconds: 5}, target)).rejects.toThrow(/could not start: .*ENOENT/)
  })
})

describe('Prometheus gate metrics', () => {
  let url = ''
  const queries: string[] = []
  const answers: Record<string, unknown> = {}
  const server = createServer((req, res) => {
    const q = new URL(req.url!, 'http://x').searchParams.get('query')!
    queries.push(q)
    res.setHeader('content-type', 'application/json')
    res.end(JSON.stringify(answers[q] ?? {status: 'error', error: `unexpected query ${q}`}))
  })
  beforeAll(async () => {
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(() => new Promise<void>((r) => server.close(() => r())))

  it('fills in the window and pool, reads a vector, and treats an empty result as no data', async () => {
    const metrics = new PrometheusMetrics(url, {'error-rate': 'errors{pool="$pool"}[$window]', 'latency-p99': 'p99[$window]'}, new FakeClock())
    answers['errors{pool="west"}[60s]'] = {status: 'success', data: {resultType: 'vector', result: [{value: [0, '1.75']}]}}
    answers['p99[30s]'] = {status: 'success', data: {resultType: 'vector', result: []}}
    expect(await metrics.read('error-rate', 60, 'west')).toBe(1.75)
    expect(await metrics.read('latency-p99', 30)).toBeNull()
    expect(queries).toEqual(['errors{pool="west"}[60s]', 'p99[30s]'])
  })

  it('a failed query or a missing query is an error, never a value', async () => {
    const metrics = new PrometheusMetrics(url, {'error-rate': 'broken'}, new FakeClock())
    await expect(metrics.read('error-rate', 60)).rejects.toThrow(/query for error-rate failed: unexpected query broken/)
    await expect(metrics.read('request-rate', 60)).rejects.toThrow(/no query for request-rate/)
  })
})
