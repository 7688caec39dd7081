import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import type {HaproxySnippets} from '../../src/wiring/haproxy-snippets.js'
import {restrictionConfig} from '../../src/haproxy/rules.js'
import {rampConfig} from '../../src/haproxy/weights.js'
import {root, sluiceInProcess} from '../helpers/command.js'

const shipped = `${root}runbooks/outlook-staged-return-haproxy.yaml`
const lines = (text: string) => text.split('\n').map((l) => l.trim())

/** A runbook file on HAProxy with these targets.haproxy lines and steps. */
function runbookOn(haproxy: string, steps: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'sluice-haproxy-config-')), 'rb.yaml')
  writeFileSync(file, `name: rb\ntargets:\n  haproxy:\n${haproxy}steps:\n${steps}`)
  return file
}

describe('sluice haproxy-config RUNBOOK (in process)', () => {
  it("prints the admin socket, the restriction and ramp lines sluice drives (the drill's own), each backend's needs and the maps' first contents", async () => {
    const {exit, stdout, stderr} = await sluiceInProcess(['haproxy-config', 'outlook-staged-return-haproxy'])
    expect(exit, stderr).toBe(0)
    const printed = lines(stdout)
    expect(printed).toContain('stats socket /run/haproxy/admin.sock mode 600 level admin')
    // The frontend's lines are the very ones restrictionConfig and rampConfig give a drill's HAProxy, in that order, together.
    const frontend = [
      ...lines(restrictionConfig('/etc/haproxy/sluice-restricted.map')),
      ...lines(rampConfig('/etc/haproxy/sluice-ramp.map', 'maintenance', 'mailbox')),
    ]
    const at = printed.indexOf(frontend[0])
    expect(at).toBeGreaterThan(0)
    expect(printed.slice(at, at + frontend.length)).toEqual(frontend)
    expect(stdout).toContain('backend mailbox\n  option abortonclose\n  default-server slowstart 60s\n')
    expect(stdout).toContain('backend maintenance\n  option abortonclose\n')
    expect(stdout).toContain('# /etc/haproxy/sluice-restricted.map: empty\n# /etc/haproxy/sluice-ramp.map:\n#   mailbox 100\n#   maintenance 0\n')
  })

  it('--json gives the pieces', async () => {
    const {exit, stdout, stderr} = await sluiceInProcess(['haproxy-config', shipped, '--json'])
    expect(exit, stderr).toBe(0)
    const json = JSON.parse(stdout) as HaproxySnippets & {runbook: string}
    expect(json.runbook).toBe('outlook-staged-return-haproxy')
    expect(json.global).toEqual(['stats socket /run/haproxy/admin.sock mode 600 level admin'])
    expect(json.ramp).toEqual(['maintenance', 'mailbox'])
    expect(json.backends).toEqual({mailbox: ['option abortonclose', 'default-server slowstart 60s'], maintenance: ['option abortonclose']})
    expect(json.maps).toEqual([
      {file: '/etc/haproxy/sluice-restricted.map', role: 'restrict', starts: []},
      {file: '/etc/haproxy/sluice-ramp.map', role: 'ramp', starts: ['mailbox 100', 'maintenance 0']},
    ])
    expect(json.frontend.at(-1)).toBe('use_backend mailbox')
  })

  it('a socket at host:port, no maps and no HAProxy gates: a TCP admin socket, no frontend lines, nothing in the backends', async () => {
    const file = runbookOn(`    socket: 127.0.0.1:9999\n    backends: {api: be_api}\n`, `  - {action: freeze, reason: x}\n`)
    const {exit, stdout, stderr} = await sluiceInProcess(['haproxy-config', file, '--json'])
    expect(exit, stderr).toBe(0)
    expect(JSON.parse(stdout)).toMatchObject({
      global: ['stats socket ipv4@127.0.0.1:9999 level admin'],
      frontend: [],
      backends: {be_api: []},
      maps: [],
      ramp: null,
    })
  })

  it('a runbook with no targets.haproxy: exit 2 naming the file and what is missing', async () => {
    const {exit, stdout, stderr} = await sluiceInProcess(['haproxy-config', 'outlook-staged-return'])
    expect(exit).toBe(2)
    expect(stdout).toBe('')
    expect(stderr).toContain(`${root}runbooks/outlook-staged-return.yaml: runbook outlook-staged-return has no targets.haproxy`)
    expect(stderr).toContain('(targets.haproxy with socket, backends, and restrictMap or rampMap)')
  })

  it('a ramp map with no second backend to split with: exit 2 saying which backends it found', async () => {
    const file = runbookOn(
      `    socket: /run/h.sock\n    backends: {a: a, b: b, c: c}\n    rampMap: /etc/r.map\n`,
      `  - {action: ramp, set: a, schedule: [50, 100], bake: 1, allowShortBake: true}\n`,
    )
    const {exit, stderr} = await sluiceInProcess(['haproxy-config', file])
    expect(exit).toBe(2)
    expect(stderr).toContain(
      `${file}: targets.haproxy.rampMap is set, but which two backends does the ramp split between? its ramps name only a and targets.haproxy.backends has a, b, c`,
    )
  })
})
