import {spawn} from 'node:child_process'
import {readFileSync, writeFileSync, mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {isolatedEnv, runJs, type CliResult} from '../helpers/cli.js'
import {FakePrometheus, mappingText} from '../helpers/fake-prometheus.js'

// A Prometheus (or something answering at its address) whose answer never ends: sluice must stop
// reading at its cap, say whose answer to which query, exit 1, and stay small. Before, calibrate
// grew to 6.4 GB and died in V8 (`Check failed: i::kMaxInt >= len`, exit 133), and with the
// deadline's help still held 2 GB.

const truth = {servers: 8, capacity: 100, low: 300, high: 1050, latencyFloor: 0.04}
const envoyChecks = '{interval: 10, baseEjection: 30, maxEjection: 300, maxEjectionPercent: 100, panicThreshold: 0, slowStart: 0}'
/** Resident memory no run of sluice against one pool should pass, whatever it is answered. */
const peakLimitKb = 300 * 1024

/**
 * The CLI spawned, with its peak resident memory: VmHWM (the kernel's own high-water mark of the
 * resident set, which only grows) read from /proc every 20 ms while it runs. The last reading is
 * at most 20 ms older than the exit; a run that grew past the limit on the way stays past it.
 */
function sluiceMeasured(args: string[], env: Record<string, string>): Promise<CliResult & {peakKb: number}> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [runJs, ...args], {env: {...process.env, NO_COLOR: '1', ...env}, stdio: ['ignore', 'pipe', 'pipe']})
    let stdout = ''
    let stderr = ''
    let peakKb = 0
    child.stdout.on('data', (d) => (stdout += d))
    child.stderr.on('data', (d) => (stderr += d))
    const poll = setInterval(() => {
      try {
        const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))
        if (hwm) peakKb = Math.max(peakKb, Number(hwm[1]))
      } catch {
        // Gone between two polls: its last reading stands.
      }
    }, 20)
    child.on('error', reject)
    child.on('close', (code) => {
      clearInterval(poll)
      resolve({code, stdout, stderr, peakKb})
    })
  })
}

describe('an answer without end from Prometheus: exit 1 naming the server and the query, memory bounded', () => {
  const end = Math.floor(Date.now() / 60_000) * 60 - 20 * 60
  const fake = new FakePrometheus({end, truth})
  const dir = mkdtempSync(join(tmpdir(), 'sluice-endless-'))
  const mapping = join(dir, 'mailbox-prometheus.yaml')
  const env = isolatedEnv('endless')
  let url = ''

  beforeAll(async () => {
    url = await fake.listen()
    writeFileSync(mapping, mappingText('envoy', envoyChecks))
  })
  afterAll(() => fake.close())

  it('calibrate: the requests range query streams for ever', async () => {
    fake.streamForever = /upstream_rq_total/
    fake.streamed = 0
    const out = await sluiceMeasured(
      [
        'calibrate',
        '--prometheus',
        url,
        '--mapping',
        mapping,
        '--window',
        '24h',
        '--until',
        new Date(end * 1000).toISOString(),
        '--out',
        join(dir, 'never.yaml'),
      ],
      env,
    )
    expect(out.code, out.stderr).toBe(1)
    expect(out.stderr).toContain(
      `Error: Prometheus ${url}: query for requests failed: answered more than 16 MiB; sluice stopped reading (no answer sluice asks for is that long: is ${url} a Prometheus server?)`,
    )
    expect(out.peakKb).toBeGreaterThan(0)
    expect(out.peakKb).toBeLessThan(peakLimitKb)
    // It read its cap and let go: the fake sent not much past it.
    expect(fake.streamed).toBeGreaterThan(16 * 1024 * 1024)
    expect(() => readFileSync(join(dir, 'never.yaml'))).toThrow(/ENOENT/)
  })

  it('assess: the requests instant query now streams for ever; no verdict', async () => {
    // A scenario to assess on: calibrated from the same fake while it answers.
    fake.streamForever = null
    const scenario = join(dir, 'mailbox.yaml')
    const calibrated = await sluiceMeasured(
      ['calibrate', '--prometheus', url, '--mapping', mapping, '--window', '6h', '--until', new Date(end * 1000).toISOString(), '--out', scenario],
      env,
    )
    expect(calibrated.code, calibrated.stderr).toBe(0)
    fake.streamForever = /upstream_rq_total/
    const out = await sluiceMeasured(['assess', '--scenario', scenario, '--prometheus', url, '--mapping', mapping, '--quick', '--json'], env)
    expect(out.code, out.stderr).toBe(1)
    const json = JSON.parse(out.stdout) as {error: {message: string}; region?: string}
    expect(json.error.message).toBe(
      `Prometheus ${url}: query for requests failed: answered more than 16 MiB; sluice stopped reading (no answer sluice asks for is that long: is ${url} a Prometheus server?)`,
    )
    expect(json.region).toBeUndefined()
    expect(out.peakKb).toBeGreaterThan(0)
    expect(out.peakKb).toBeLessThan(peakLimitKb)
  })
})
