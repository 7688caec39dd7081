import {existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {delimiter, dirname, join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {findHaproxy} from '../../src/haproxy/process.js'
import {sluice} from '../helpers/cli.js'

// sluice calibrate reading a real HAProxy, as an operator would point it at theirs: a drill runs
// a small fleet behind HAProxy with its admin socket opened where calibrate can read it
// (drill --socket), and calibrate samples only that socket (and the configuration the running
// HAProxy was started with), never the drill's scenario. Then a second drill of the same fleet
// is predicted from what calibrate wrote (drill --model). The loop over several pairs, judged
// pair by pair, is `npm run closed-loop`; this is its machinery, checked once.

let dir: string
const withHaproxy = {PATH: [dirname(findHaproxy() ?? '/usr/sbin/haproxy'), process.env.PATH ?? ''].join(delimiter)}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sluice-calibrate-haproxy-'))
})

afterAll(() => {
  if (dir) rmSync(dir, {recursive: true, force: true})
})

/** Six servers of 20 rps, checked every second; `broken` of them out from 10 s to `fixAt`. */
function fleetScenario(name: string, demand: number, broken: number, seconds: number, fixAt: number): string {
  const file = join(dir, `${name}.yaml`)
  writeFileSync(
    file,
    `name: ${name}
duration: ${seconds}
# Exact service times: the service time calibrate reads is the latency floor, and at this load with
# exponential ones (drawn) it is queueing as much as service (0.22 s read of 0.1 s).
randomness: none
pools:
  - name: web
    servers: 6
    capacity: 20
    queueSeconds: 3
demand:
  rps: ${demand}
healthCheck:
  kind: haproxy
  inter: 1
  fall: 2
  rise: 2
faults:
  - kind: broken
    servers: ${broken}
    from: 10
    to: ${fixAt}
setups:
  checks-only: {}
`,
  )
  return file
}

async function untilExists(path: string, seconds: number): Promise<void> {
  for (let i = 0; i < seconds * 10 && !existsSync(path); i++) await new Promise((resolve) => setTimeout(resolve, 100))
}

describe('calibrate from a real HAProxy', () => {
  let model: string

  it("fits the fleet's capacity within 15% and reads its checks back, from HAProxy alone", async () => {
    // 4 servers left of 6 carry 80 rps of 110: the survivors run past capacity for 30 s.
    const run = fleetScenario('calibration-run', 110, 2, 50, 40)
    const socket = join(dir, 'haproxy.sock')
    model = join(dir, 'calibrated.yaml')
    const drill = sluice(['drill', run, '--rate-scale', '1', '--time-scale', '1', '--seeds', '0', '--socket', socket, '--json'], {env: withHaproxy})
    await untilExists(socket, 60)
    expect(existsSync(socket)).toBe(true)
    // The window outlasts the drill: calibrate ends when the drill stops its HAProxy, and says so.
    const calibrated = sluice(['calibrate', '--haproxy', socket, '--backend', 'web', '--window', '120', '--period', '2', '--out', model, '--json'])
    const [drilled, cal] = await Promise.all([drill, calibrated])
    expect(drilled.code, drilled.stderr).toBe(0)
    expect(cal.code, cal.stderr).toBe(0)
    const c = JSON.parse(cal.stdout)
    expect(c.settings).toMatchObject({family: 'haproxy', servers: 6, interval: 1, fall: 2, rise: 2, slowStart: 0})
    expect(c.figures.capacity.method).toBe('plateau')
    expect(Math.abs(c.figures.capacity.value - 20) / 20).toBeLessThan(0.15)
    // The fleet keeps its capacity however late its timers fire, but not its latency: on a machine
    // too busy for the drill (its verdict says so), each answer is as late as the loops, and the
    // service time read is the machine's as much as the fleet's. Inconclusive then, as a drill is.
    const limited = (JSON.parse(drilled.stdout) as {verdict: {kind: string; reason?: string}}).verdict
    if (limited.kind === 'inconclusive') console.warn(`service time ${c.figures.serviceTime.value} s not judged: ${limited.reason}`)
    else {
      expect(c.figures.serviceTime.value).toBeGreaterThan(0.09)
      expect(c.figures.serviceTime.value).toBeLessThan(0.2)
    }
    expect(c.assumed.join('\n')).toMatch(/sampling backend web stopped at .* because HAProxy stopped answering/)
    const text = readFileSync(model, 'utf8')
    expect(text).toMatch(/^ {2}kind: haproxy$/m)
    expect(text).toMatch(/^ {2}inter: 1$/m)
    // What the scenario says of where each figure came from.
    expect(text).toMatch(/# fitted \(90%: [\d.]+–[\d.]+\): the plateau of requests served per server/)
    const simulated = await sluice(['simulate', '--scenario', model, '--json'])
    expect(simulated.code, simulated.stderr).toBe(0)
  }, 150_000)

  it('drills another fault and demand on the same fleet, predicted from the calibrated scenario', async () => {
    expect(model, 'the calibration above wrote its scenario').toBeDefined()
    const pair = fleetScenario('pair', 70, 3, 40, 30)
    const drilled = await sluice(['drill', pair, '--model', model, '--rate-scale', '1', '--time-scale', '1', '--seeds', '0'], {env: withHaproxy})
    expect(drilled.code, drilled.stderr).toBe(0)
    expect(drilled.stdout).toContain(`predicted from ${model}'s pool, checks and clients, with pair's demand and faults`)
    expect(drilled.stdout).toMatch(/^(The drill and the simulator agree|The drill and the simulator DISAGREE|Inconclusive)/m)
  }, 120_000)
})
