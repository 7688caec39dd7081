import {existsSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'
import {loadScenario} from '../../src/sim/scenario/load-scenario.js'
import {isolatedInProcess} from '../helpers/command.js'
import {FakePrometheus, mappingText} from '../helpers/fake-prometheus.js'

// Readings no pool gives, from a Prometheus that answers them: each is an error naming the server,
// the query (and where the mapping gives it) and the value, exit 1, and never a verdict or a
// scenario. Before, assess judged demand of −5 rps "STUCK … turn away all of all traffic" (exit 3),
// "16 of 8 servers in rotation" and 1e308 rps; calibrate wrote `servers: 1000000000000` and
// Infinity demand; malformed answers came out as "number 5 is not iterable" and "failed: undefined".

const sluice = isolatedInProcess('impossible')

/** The CLI's result, in this process, with no AWS and a state directory of its own: the exit code, stdout, stderr. */
async function sluiceInProcess(args: string[]): Promise<{exit: number; stdout: string; stderr: string}> {
  const out = await sluice(args)
  return {exit: out.code ?? -1, stdout: out.stdout, stderr: out.stderr}
}

const truth = {servers: 8, capacity: 100, low: 300, high: 1050, latencyFloor: 0.04}
const envoyChecks = '{interval: 10, baseEjection: 30, maxEjection: 300, maxEjectionPercent: 100, panicThreshold: 0, slowStart: 0}'

interface Failure {
  error?: {message: string; exit: number}
  region?: string
}

describe('impossible readings from Prometheus are refused: exit 1, the query and the value named, no verdict', () => {
  const end = Math.floor(Date.now() / 60_000) * 60 - 20 * 60
  const until = ['--until', new Date(end * 1000).toISOString()]
  const fake = new FakePrometheus({end, truth})
  const dir = mkdtempSync(join(tmpdir(), 'sluice-impossible-'))
  const mapping = join(dir, 'mailbox-prometheus.yaml')
  const scenario = join(dir, 'mailbox.yaml')
  let url = ''
  const at = (line: number, col: number) => `${mapping}:${line}:${col}`

  beforeAll(async () => {
    url = await fake.listen()
    writeFileSync(mapping, mappingText('envoy', envoyChecks))
    const calibrated = await sluiceInProcess(['calibrate', '--prometheus', url, '--mapping', mapping, '--window', '6h', ...until, '--out', scenario])
    expect(calibrated.exit, calibrated.stderr).toBe(0)
  })
  afterEach(() => {
    fake.now = {rps: truth.low, healthy: 8, servers: 8, errorRate: 0}
    fake.override = null
    fake.failWith = null
  })
  afterAll(() => fake.close())

  const assess = async (): Promise<{exit: number; json: Failure; stderr: string}> => {
    const out = await sluiceInProcess(['assess', '--scenario', scenario, '--prometheus', url, '--mapping', mapping, '--quick', '--json'])
    return {exit: out.exit, json: JSON.parse(out.stdout) as Failure, stderr: out.stderr}
  }

  const pool = (rps: number, healthy: number, servers = 8, errorRate = 0) => ({rps, healthy, servers, errorRate})
  const cases: Array<[string, ReturnType<typeof pool>, string]> = [
    ['demand of −5 rps', pool(-5, 8), `query for requests (${at(6, 13)}) read -5; expected requests a second, 0 to 1e+9`],
    ['demand of Infinity', pool(Infinity, 8), `query for requests (${at(6, 13)}) read Infinity; expected requests a second, 0 to 1e+9`],
    ['demand of NaN', pool(NaN, 8), `query for requests had the value NaN at`],
    [
      'demand no 8 servers could be sent (5e8 rps)',
      pool(5e8, 8),
      `query for requests (${at(6, 13)}) read 500000000; expected requests a second, 0 to 8e+7 (1e+7 a server for 8 servers, orders of magnitude past what any pool carries)`,
    ],
    [
      '16 of 8 servers in rotation',
      pool(750, 16),
      `query for healthy (${at(8, 12)}) read 16; expected a whole number of servers in rotation, 0 to the pool's 8`,
    ],
    ['−5 servers in rotation', pool(750, -5), `query for healthy (${at(8, 12)}) read -5; expected a whole number of servers in rotation, 0 to the pool's 8`],
    ['7.5 servers in rotation', pool(750, 7.5), `query for healthy (${at(8, 12)}) read 7.5; expected a whole number of servers in rotation`],
    ['2,000,000 servers', pool(750, 8, 2_000_000), `query for servers (${at(9, 12)}) read 2000000; expected a whole number of servers, 1 to 100000`],
    ['errors of −50%', pool(750, 8, 8, -0.5), `query for errors (${at(7, 11)}) read -375; expected requests a second`],
  ]

  for (const [name, now, message] of cases)
    it(`assess: ${name}`, async () => {
      fake.now = now
      const out = await assess()
      expect(out.exit, out.stderr).toBe(1)
      expect(out.json.region).toBeUndefined()
      expect(out.json.error?.exit).toBe(1)
      expect(out.json.error?.message).toContain(`Prometheus ${url}: ${message}`)
    })

  it('assess: demand of 1e308 rps, as Prometheus writes it', async () => {
    fake.override = {query: /upstream_rq_total/, value: () => '1e308'}
    const out = await assess()
    expect(out.exit, out.stderr).toBe(1)
    expect(out.json.region).toBeUndefined()
    expect(out.json.error?.message).toContain(`Prometheus ${url}: query for requests (${at(6, 13)}) read 1e+308; expected requests a second, 0 to 1e+9`)
  })

  it('assess: the same, said to a person on stderr with no verdict on stdout', async () => {
    fake.now = pool(-5, 8)
    const out = await sluiceInProcess(['assess', '--scenario', scenario, '--prometheus', url, '--mapping', mapping, '--quick'])
    expect(out.exit).toBe(1)
    expect(out.stdout).not.toMatch(/STUCK|UNHARMED|RECOVERING/i)
    expect(out.stderr).toContain(
      `Error: Prometheus ${url}: query for requests (${at(6, 13)}) read -5; expected requests a second, 0 to 1e+9. An impossible reading: nothing is judged on it`,
    )
  })

  const calibrate = async (extra: string[] = []) => {
    const out = join(dir, `out-${Math.random().toString(36).slice(2)}.yaml`)
    const run = await sluiceInProcess(['calibrate', '--prometheus', url, '--mapping', mapping, '--window', '6h', ...until, '--out', out, '--json', ...extra])
    return {exit: run.exit, json: JSON.parse(run.stdout) as Failure, stderr: run.stderr, wrote: existsSync(out)}
  }

  it('calibrate: a servers query of 1e12 writes nothing', async () => {
    fake.override = {query: /membership_total/, value: () => '1e12'}
    const out = await calibrate()
    expect(out.exit, out.stderr).toBe(1)
    expect(out.wrote).toBe(false)
    expect(out.json.error?.message).toBe(
      `Prometheus ${url}: query for servers (${at(9, 12)}) read 1000000000000; expected a whole number of servers, 1 to 100000. An impossible reading: nothing is judged on it`,
    )
  })

  it('calibrate: a requests rate of 1e308 in the window (Infinity demand, NaN capacity before) writes nothing, naming the time', async () => {
    fake.override = {query: /upstream_rq_total/, value: (t) => (t === end - 3 * 3600 ? '1e308' : '500')}
    const out = await calibrate()
    expect(out.exit, out.stderr).toBe(1)
    expect(out.wrote).toBe(false)
    expect(out.json.error?.message).toBe(
      `Prometheus ${url}: query for requests (${at(6, 13)}) at ${new Date((end - 3 * 3600) * 1000).toISOString()} read 1e+308; expected requests a second, 0 to 1e+9. An impossible reading: nothing is judged on it`,
    )
  })

  it('calibrate: a negative error rate, a latency of +Inf, a healthy gauge of −1 are each refused', async () => {
    const refused: Array<[RegExp, string, string]> = [
      [/envoy_response_code_class/, '-3', `query for errors (${at(7, 11)}) at`],
      [/rq_time_sum/, '+Inf', `query for latency (${at(10, 12)}) at`],
      // The gauge is read now first, for the settings: refused there.
      [/membership_healthy/, '-1', `query for healthy (${at(8, 12)})`],
    ]
    for (const [query, value, named] of refused) {
      fake.override = {query, value: () => value}
      const out = await calibrate()
      expect(out.exit, value).toBe(1)
      expect(out.wrote).toBe(false)
      expect(out.json.error?.message).toContain(`Prometheus ${url}: ${named}`)
      expect(out.json.error?.message).toContain(` read ${value === '+Inf' ? 'Infinity' : value}; expected`)
    }
  })

  it('calibrate: a healthy gauge of 0 all window long (no capacity a server follows) is an error naming the source, not an internal one', async () => {
    fake.override = {query: /membership_healthy/, value: () => '0'}
    fake.now = pool(truth.low, 0)
    const out = await calibrate()
    expect(out.exit, out.stderr).toBe(1)
    expect(out.wrote).toBe(false)
    expect(out.json.error?.message).toBe(
      `Prometheus ${url}: pool mailbox, queries from ${mapping}: no period with requests and servers in rotation: nothing to fit a capacity on`,
    )
  })

  it('calibrate: 20,000 servers over a day is more than a scenario can simulate: exit 1 naming the figure, nothing written', async () => {
    writeFileSync(join(dir, 'big.yaml'), mappingText('envoy', envoyChecks).replace(/servers: '.*'/, 'servers: 20000'))
    const out = join(dir, 'big-scenario.yaml')
    const run = await sluiceInProcess([
      'calibrate',
      '--prometheus',
      url,
      '--mapping',
      join(dir, 'big.yaml'),
      '--window',
      '24h',
      ...until,
      '--out',
      out,
      '--json',
    ])
    expect(run.exit, run.stderr).toBe(1)
    expect(existsSync(out)).toBe(false)
    expect((JSON.parse(run.stdout) as Failure).error?.message).toBe(
      `Prometheus ${url}: pool mailbox, queries from ${join(dir, 'big.yaml')}: calibrate would write a scenario simulate refuses, so it writes nothing: duration: expected at most 1e+9 servers × ticks to simulate, got 1.73e+9: fewer servers, a shorter duration or a coarser tick (it would write \`duration: 86400\`, measured: the span of the window read (--window), 1440 periods of 60 s)`,
    )
    // A window the simulator can step through is written, and loads.
    const short = await sluiceInProcess(['calibrate', '--prometheus', url, '--mapping', join(dir, 'big.yaml'), '--window', '6h', ...until, '--out', out])
    expect(short.exit, short.stderr).toBe(0)
    expect(loadScenario(out).scenario.pools[0].servers).toBe(20000)
  })

  it('malformed answers are errors naming the query and what came, never a TypeError', async () => {
    const answers: Array<[RegExp, string, string]> = [
      // Before: "query for requests failed: undefined".
      [/upstream_rq_total/, '{}', "query for requests failed: the answer has no status, so it is not Prometheus's"],
      // Before: "number 5 is not iterable".
      [
        /upstream_rq_total/,
        JSON.stringify({status: 'success', data: {resultType: 'matrix', result: [{metric: {}, values: [5]}]}}),
        'query for requests failed: the answer is not Prometheus\'s: it has a point that is not [time, "value"]',
      ],
      [
        /upstream_rq_total/,
        JSON.stringify({status: 'success', data: {resultType: 'matrix', result: 5}}),
        "query for requests failed: the answer is not Prometheus's: it has a result that is 5, not a list of series",
      ],
      [
        /upstream_rq_total/,
        JSON.stringify({status: 'success', data: {resultType: 'matrix', result: [{values: [[end, {}]]}]}}),
        "query for requests failed: the answer is not Prometheus's: it has a value of {}, not a number",
      ],
      [/upstream_rq_total/, JSON.stringify({status: 'success'}), "query for requests failed: the answer is not Prometheus's: it has no data"],
      [/upstream_rq_total/, '[1,2,3]', 'query for requests failed: the answer is not a JSON object'],
    ]
    for (const [query, body, message] of answers) {
      fake.failWith = {status: 200, body, query}
      const out = await calibrate()
      expect(out.exit, body).toBe(1)
      expect(out.json.error?.message, body).toBe(`Prometheus ${url}: ${message}`)
    }
  })

  it('a scenario calibrate writes says where every figure came from, the window included', () => {
    expect(readFileSync(scenario, 'utf8')).toMatch(/# measured: the span of the window read \(--window\), 360 periods of 60 s\nduration: 21600\n/)
  })
})
