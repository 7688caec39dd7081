import {mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import type {HaproxySnippets} from '../../src/wiring/haproxy-snippets.js'
import {spawnCollected} from '../helpers/cli.js'
import {sluiceInProcess} from '../helpers/command.js'

// What `sluice haproxy-config` prints, put in a haproxy.cfg around a frontend and servers of the
// user's, is a configuration HAProxy itself accepts (`haproxy -c`), and one it refuses while a map
// the lines read is missing: the reason the command says the maps must be in place first.
describe('sluice haproxy-config: the lines it prints pass `haproxy -c`', () => {
  it('valid with the maps in place; refused naming the ramp map without it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-haproxy-cfg-'))
    const file = join(dir, 'rb.yaml')
    writeFileSync(
      file,
      `name: rb
targets:
  haproxy:
    socket: ${dir}/admin.sock
    backends: {blue: blue, green: green}
    slowStart: {blue: 30}
    restrictMap: ${dir}/restricted.map
    rampMap: ${dir}/ramp.map
  metrics: {source: haproxy}
steps:
  - {action: restrict, type: sync, paths: [/sync/], retryAfter: 60}
  - {action: ramp, set: green, schedule: [50, 100], bake: 30, gate: {metric: error-rate, threshold: 1}}
`,
    )
    const {exit, stdout, stderr} = await sluiceInProcess(['haproxy-config', file, '--json'])
    expect(exit, stderr).toBe(0)
    const s = JSON.parse(stdout) as HaproxySnippets
    const indent = (l: string) => `  ${l}`
    const cfg = [
      'global',
      ...s.global.map(indent),
      'defaults',
      ...['mode http', 'timeout connect 1s', 'timeout client 5s', 'timeout server 5s'].map(indent),
      // -c binds nothing: any port will do.
      'frontend web',
      indent('bind 127.0.0.1:18080'),
      ...s.frontend.map(indent),
      ...Object.entries(s.backends).flatMap(([name, needs]) => [`backend ${name}`, ...needs.map(indent), indent(`server ${name}-1 127.0.0.1:1 check`)]),
    ]
    writeFileSync(join(dir, 'haproxy.cfg'), cfg.join('\n') + '\n')
    for (const m of s.maps) writeFileSync(m.file, m.starts.map((l) => `${l}\n`).join(''))
    const valid = await spawnCollected('haproxy', ['-c', '-f', join(dir, 'haproxy.cfg')], {timeoutMs: 30_000})
    expect(valid.code, valid.stderr).toBe(0)
    expect(valid.stdout + valid.stderr).toContain('Configuration file is valid')
    rmSync(join(dir, 'ramp.map'))
    const missing = await spawnCollected('haproxy', ['-c', '-f', join(dir, 'haproxy.cfg')], {timeoutMs: 30_000})
    expect(missing.code).not.toBe(0)
    expect(missing.stderr).toContain(`${dir}/ramp.map`)
  })
})
