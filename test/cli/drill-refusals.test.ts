import {existsSync, mkdtempSync, symlinkSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {delimiter, dirname, join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {exitCodeOf} from '../../src/cli/exit-codes.js'
import {findHaproxy} from '../../src/haproxy/process.js'
import {inProcess} from '../helpers/command.js'

// `sluice drill` refusing before it starts anything (no HAProxy, no fleet, no load), through the CLI
// in this process. Real drills, spawned, are test/drill/drill-cli.test.ts.

const dir = mkdtempSync(join(tmpdir(), 'sluice-drill-refusals-'))
// The drill finds HAProxy on the PATH only; put the system's there whatever this shell's PATH is.
const haproxyDir = dirname(findHaproxy() ?? '/usr/sbin/haproxy')
const withHaproxy = {PATH: [haproxyDir, process.env.PATH ?? ''].join(delimiter)}
const drill = (args: string[], env: Record<string, string> = withHaproxy) => inProcess(['drill', ...args], {env})

/** The drill's stderr, once it has refused (exit 2, nothing on stdout): each refusal must name its own cause there. */
async function refusal(args: string[], env?: Record<string, string>): Promise<string> {
  const {code, stdout, stderr} = await drill(args, env)
  expect(code).toBe(exitCodeOf('bad-input'))
  expect(stdout).toBe('')
  return stderr
}

describe('sluice drill refuses before it starts anything', () => {
  it('without haproxy on the PATH, exits 2 and says where one is', async () => {
    const bin = mkdtempSync(join(dir, 'bin-'))
    symlinkSync(process.execPath, join(bin, 'node'))
    const stderr = await refusal(['drill-headroom'], {PATH: bin})
    expect(stderr).toContain('haproxy is not on the PATH')
    if (existsSync('/usr/sbin/haproxy')) expect(stderr).toContain('/usr/sbin/haproxy')
  })

  it.each([
    [['--rate-scale', '0'], '--rate-scale'],
    [['--time-scale', '2'], '--time-scale'],
  ])('refuses %j with exit 2, naming the flag', async (flags, flag) => {
    const stderr = await refusal(['drill-headroom', ...flags])
    expect(stderr).toContain(flag)
  })

  it('refuses a time scale at which a check would time out within four service times, naming the check and the least scale', async () => {
    // drill-headroom: inter 2 s, requests of 100 ms; at 0.1 the check would time out after 200 ms.
    const stderr = await refusal(['drill-headroom', '--time-scale', '0.1'])
    expect(stderr.trim()).toBe(
      "Error: --time-scale 0.1: HAProxy's check (inter 2 s) would time out after 200 ms while a request takes 100 ms to serve (service time is real, timeouts shrink with the time scale); a drill needs every timeout at least 4 times the service time: a time scale of at least 0.2",
    )
  })

  it('refuses a scenario it cannot find', async () => {
    const {code, stderr} = await drill(['no-such-scenario-anywhere'])
    expect(code).toBe(exitCodeOf('bad-input'))
    expect(stderr).toContain('no-such-scenario-anywhere')
  })

  it('refuses a scenario whose servers are checked as Envoy does', async () => {
    const stderr = await refusal(['outlook-2026'])
    expect(stderr).toContain('outlook-2026')
    expect(stderr).toContain('healthCheck kind haproxy')
  })

  it('refuses a runbook that steers AWS, naming targets.haproxy', async () => {
    const stderr = await refusal(['outlook-staged-return'])
    expect(stderr).toContain('targets.haproxy')
    // At the runbook's targets, file:line:column.
    expect(stderr).toMatch(/outlook-staged-return\.yaml:\d+:\d+/)
  })
})
