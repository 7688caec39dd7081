import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {sluiceInProcess} from '../helpers/command.js'

/**
 * A plainly overloaded pool: 850 rps on 6 servers of 100 rps, every one in rotation, nothing
 * broken. At 60eccf4 assess said STUCK and "no single lever sluice tried gets it out" behind an
 * ALB, having tried slow start only, and never said the demand was past what the servers serve.
 */

interface Lever {
  kind: string
  type?: string
  what: string
  value: number | null
  holds: boolean
  backInSeconds: number | null
  command?: string
}

interface AssessJson {
  region: string
  capacity: {perServer: number; inRotation: number; pool: number}
  levers: Lever[]
  sentences: string[]
}

const dir = mkdtempSync(join(tmpdir(), 'sluice-assess-overload-'))

/** Six servers of 100 rps at 850 rps: `extra` lines before the pools (frontedBy, restrictions), Envoy's checks unless `check` says otherwise. */
function scenarioFile(name: string, extra = '', servers = 6, check = '{interval: 10, baseEjection: 30, maxEjection: 300}', demand = '{rps: 850}'): string {
  const file = join(dir, `${name}.yaml`)
  const model = check.includes('haproxy') ? '' : 'model: seed\n'
  writeFileSync(
    file,
    `name: ${name}\nduration: 710\n${model}${extra}pools: [{name: web, servers: ${servers}, capacity: 100}]\ndemand: ${demand}\nhealthCheck: ${check}\nsetups: {no-guard: {}}\n`,
  )
  return file
}

async function assessed(file: string, more: string[] = []): Promise<AssessJson> {
  const r = await sluiceInProcess(['assess', '--scenario', file, '--demand', '850', '--in-rotation', '6', '--quick', '--json', ...more])
  expect(r.exit, r.stderr).toBe(3)
  return JSON.parse(r.stdout) as AssessJson
}

/** `simulate` on a scenario written out by hand: seconds from the fix to full service, or null when it never gets there. */
async function simulated(file: string): Promise<number | null> {
  const r = await sluiceInProcess(['simulate', '--scenario', file, '--json'])
  expect(r.exit, r.stderr).toBe(0)
  return (JSON.parse(r.stdout) as {setups: Array<{recoveredSecondsAfterFix: number | null}>}).setups[0].recoveredSecondsAfterFix
}

describe('sluice assess on a plainly overloaded pool: demand against capacity, and the levers that carry it (in process)', () => {
  it('behind an ALB: says demand is 42% over what the 6 servers serve, and offers a share of all traffic to shed and the servers to add, each confirmed', async () => {
    const alb = scenarioFile('six-alb', 'frontedBy: alb\n')
    const text = await sluiceInProcess(['assess', '--scenario', alb, '--demand', '850', '--in-rotation', '6', '--quick'])
    expect(text.exit, text.stderr).toBe(3)
    expect(text.stdout).toContain(
      'Demand 850 rps is 42% over the 600 rps the 6 servers in rotation can serve, and every server is in rotation: an overload, not a cascade; no fix of a trigger gets it out, less demand or more servers do.',
    )
    expect(text.stdout).not.toContain('No single lever sluice tried gets it out')
    expect(text.stdout).toContain(
      'The smallest lever that gets it out: turn away 30% of all traffic ahead of the ALB (its listener rules turn away all they match, not a share) and keep it away while demand is over the 600 rps the 6 servers can serve, or until servers are added, back at full service 0 s after.',
    )
    expect(text.stdout).toMatch(/add 3 servers to the pool \(9 in all\), taken +yes/)

    const a = await assessed(alb)
    expect(a.region).toBe('stuck')
    expect(a.capacity).toEqual({perServer: 100, inRotation: 600, pool: 600})
    const shed = a.levers.find((l) => l.kind === 'shed' && l.type === 'all')!
    expect(shed).toMatchObject({value: 30, holds: true})
    // An ALB's listener rule turns away all it matches: sluice has no command that sheds a share there.
    expect(shed.command).toBeUndefined()
    const add = a.levers.find((l) => l.kind === 'add-servers')!
    expect(add).toMatchObject({value: 3, holds: true})

    // The simulator, through simulate, on the question written out: stuck as it is, back with 30% of all traffic
    // turned away from the fix (90 s), still stuck with 29%; 9 servers carry 850 rps and 8 do not.
    let asked = 0
    const question = (lines: string, servers = 6) => scenarioFile(`question-${++asked}`, lines, servers)
    expect(await simulated(question(''))).toBeNull()
    expect(await simulated(question('restrictions: [{type: all, share: 30, from: 90}]\n'))).not.toBeNull()
    expect(await simulated(question('restrictions: [{type: all, share: 29, from: 90}]\n'))).toBeNull()
    expect(await simulated(question('', 9))).not.toBeNull()
    expect(await simulated(question('', 8))).toBeNull()
  }, 60_000)

  it('in front of Envoy or HAProxy: the shed is a command, kept until servers are added; a pool of named types is shed across all of them', async () => {
    const envoy = await assessed(scenarioFile('six'))
    expect(envoy.levers.find((l) => l.kind === 'shed' && l.type === 'all')).toMatchObject({
      value: 30,
      holds: true,
      command: 'sluice restrict --type all --path "/*" --share 30; sluice lift --type all once servers are added',
    })
    expect(envoy.levers.find((l) => l.kind === 'add-servers')).toMatchObject({value: 3, holds: true})

    // HAProxy's checks have no seed model: its scenario draws arrivals and service times, and 9
    // servers at 850 rps (94% of their capacity) tip; at the mean they hold.
    const haproxy = scenarioFile('six-haproxy', '', 6, '{kind: haproxy, inter: 2, fall: 3, rise: 2}')
    const h = await assessed(haproxy)
    expect(h.levers.find((l) => l.kind === 'shed' && l.type === 'all')!.holds).toBe(true)
    expect(h.levers.find((l) => l.kind === 'add-servers')).toMatchObject({value: 4, holds: true})
    const hMean = await assessed(haproxy, ['--randomness', 'none'])
    expect(hMean.levers.find((l) => l.kind === 'add-servers')).toMatchObject({value: 3, holds: true})

    // Types the scenario names: a share of all of them, and each type on its own.
    const n = await assessed(scenarioFile('six-named', '', 6, undefined, '{rps: 850, types: {sync: 0.4, mail: 0.6}}'))
    expect(n.levers.find((l) => l.type === 'all')).toMatchObject({value: 30, holds: true})
    expect(n.levers.filter((l) => l.kind === 'shed').map((l) => l.type)).toEqual(expect.arrayContaining(['all', 'sync', 'mail']))
  }, 60_000)

  it('says demand against capacity in every verdict, the map and the page included', async () => {
    const whole = await sluiceInProcess(['assess', '--scenario', 'outlook-2026', '--demand', '1500', '--in-rotation', '20', '--quick'])
    expect(whole.stdout).toContain('Demand 1,500 rps is 75% of the 2,000 rps the 20 servers in rotation can serve.')
    const cascade = await sluiceInProcess(['assess', '--scenario', 'outlook-2026', '--demand', '1500', '--in-rotation', '14', '--quick'])
    expect(cascade.stdout).toContain('Demand 1,500 rps is 7.1% over the 1,400 rps the 14 servers in rotation can serve; all 20 can serve 2,000 rps.')

    const svg = join(dir, 'six.svg')
    const html = join(dir, 'six.html')
    const r = await sluiceInProcess([
      'assess',
      '--scenario',
      scenarioFile('six'),
      '--demand',
      '850',
      '--in-rotation',
      '6',
      '--workers',
      '1',
      '--svg',
      svg,
      '--html',
      html,
    ])
    expect(r.exit, r.stderr).toBe(3)
    const page = readFileSync(html, 'utf8')
    expect(page).toContain('<p>Demand 850 rps is 42% over the 600 rps the 6 servers in rotation can serve')
    expect(page).toContain('<td>add 3 servers to the pool (9 in all), taken into rotation as they pass their checks</td><td>yes</td>')
    // The shed of all traffic moves the pool down the map's demand axis, to 70% of today's.
    const drawn = readFileSync(svg, 'utf8')
    expect(drawn).toContain('>shed 30%</text>')
    expect(drawn).toMatch(/the other levers that get it out change the map rather than move the pool: add 3 servers/)
  }, 60_000)
})
