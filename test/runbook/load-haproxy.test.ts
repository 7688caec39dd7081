import {describe, expect, it} from 'vitest'
import {InputError} from '../../src/errors.js'
import {actionOf} from '../../src/actions/registry.js'
import {iamPolicy, noPolicyNeeded} from '../../src/live/iam-policy.js'
import {lockedResources} from '../../src/wiring/live.js'
import {parseRunbook} from '../../src/loader/load-runbook.js'
import {backendOf} from '../../src/runbook/targets.js'
import {rehearse} from '../../src/wiring/rehearsal.js'
import {RecordingIO} from '../helpers/fakes.js'

/** Every problem the loader finds in a runbook it refuses. */
function problems(file: string, text: string): string[] {
  try {
    parseRunbook(file, text)
  } catch (error) {
    if (error instanceof InputError) return [...error.problems]
    throw error
  }
  throw new Error(`${file}: the loader accepted it`)
}

/** A runbook on one HAProxy (lines 1–9), then `steps` from line 10. */
const onHaproxy = (steps: string, extraTargets = '', metrics = 'haproxy') => `name: hx
targets:
  haproxy:
    socket: unix:/run/haproxy/admin.sock
    backends: {blue: be_blue, green: be_green}
    slowStart: {blue: 30}
    restrictMap: /etc/haproxy/restricted.map
    rampMap: /etc/haproxy/ramp.map
${extraTargets}  metrics: {source: ${metrics}}
steps:
${steps}`

describe('a runbook on HAProxy (targets.haproxy)', () => {
  it("loads: pools are the backends, the ramp map's sets are backend → pool, and locks, plans and IAM name HAProxy", () => {
    const runbook = parseRunbook(
      'hx.yaml',
      onHaproxy(`  - {action: restrict, type: sync, paths: [/sync/*, /bulk/]}
  - {action: cycle, pool: blue, batch: 1, gate: {metric: healthy-targets, threshold: 90, pool: blue}}
  - {action: ramp, set: be_green, schedule: [10, 100], bake: 5, gate: {metric: error-rate, threshold: 1, window: 5, interval: 1}}
  - {action: lift, type: sync}
`),
    )
    expect(backendOf(runbook.targets).weightedSets).toEqual({be_blue: 'blue', be_green: 'green'})
    // One socket, named as the Runtime API client names it: `unix:` or not, the same lock.
    expect(lockedResources(runbook)).toEqual([
      'haproxy:/run/haproxy/admin.sock/map//etc/haproxy/restricted.map',
      'haproxy:/run/haproxy/admin.sock/backend/be_blue',
      'haproxy:/run/haproxy/admin.sock/map//etc/haproxy/ramp.map',
    ])
    const plan = runbook.steps.map((s) => actionOf(s).plan(s, {targets: runbook.targets}).join(' | '))
    expect(plan[0]).toContain('on haproxy map /etc/haproxy/restricted.map (/run/haproxy/admin.sock)')
    expect(plan[1]).toContain('blue, haproxy backend be_blue (/run/haproxy/admin.sock), in batches of 1')
    expect(plan[2]).toContain('be_green 10% → 100% of haproxy map /etc/haproxy/ramp.map (/run/haproxy/admin.sock) (the rest to be_blue)')
    expect(plan[3]).toContain('from haproxy map /etc/haproxy/restricted.map (/run/haproxy/admin.sock)')
    expect(plan.join('\n')).not.toContain('undefined')
    const policy = iamPolicy(runbook)
    expect(policy.Statement).toEqual([])
    expect(noPolicyNeeded(runbook, policy)).toBe(
      'hx makes no AWS calls (it drives HAProxy /run/haproxy/admin.sock over its Runtime API): no AWS permissions are needed',
    )
  })

  it('Prometheus metrics go with HAProxy (its exporter, scraped)', () => {
    const text = onHaproxy(
      '  - {action: check, gate: {metric: latency-p99, threshold: 200}}\n',
      '',
      "prometheus, url: 'http://prom:9090', queries: {latency-p99: 'x'}",
    )
    expect(parseRunbook('prom.yaml', text).targets.metrics?.source).toBe('prometheus')
  })

  it('with AWS targets too: refused at each AWS target, naming both', () => {
    const text = onHaproxy(
      '  - {action: wait, for: 1}\n',
      `  dns: {zone: Z1, record: a.example.com., sets: {a: blue, b: green}}
  targetGroups: {blue: arn:tg}
  listener: arn:listener
`,
      'cloudwatch, loadBalancer: app/x/1',
    )
    expect(problems('both.yaml', text)).toEqual([
      'both.yaml:9:8: targets.dns: targets.dns and targets.haproxy: one runbook drives one control plane, AWS or HAProxy; split it into two runbooks',
      'both.yaml:10:17: targets.targetGroups: targets.targetGroups and targets.haproxy: one runbook drives one control plane, AWS or HAProxy; split it into two runbooks',
      'both.yaml:11:13: targets.listener: targets.listener and targets.haproxy: one runbook drives one control plane, AWS or HAProxy; split it into two runbooks',
      'both.yaml:12:21: targets.metrics.source: CloudWatch metrics (targets.metrics.source) and targets.haproxy: one runbook drives one control plane, AWS or HAProxy; split it into two runbooks',
    ])
  })

  it('metrics source haproxy with no targets.haproxy: refused at the source', () => {
    const text = `name: nohx
targets:
  metrics: {source: haproxy}
steps:
  - {action: check, gate: {metric: error-rate, threshold: 1}}
`
    expect(problems('nohx.yaml', text)).toEqual([
      "nohx.yaml:3:21: targets.metrics.source: metrics source haproxy reads HAProxy's counters over its Runtime API, and the runbook has no targets.haproxy to say where that is",
    ])
  })

  it('a socket that is neither a path nor host:port: refused at the socket', () => {
    const text = onHaproxy('  - {action: wait, for: 1}\n').replace('unix:/run/haproxy/admin.sock', 'haproxy-host')
    expect(problems('socket.yaml', text)).toEqual([
      'socket.yaml:4:13: targets.haproxy.socket: haproxy runtime API address "haproxy-host" is neither a unix socket path (unix:/run/haproxy/admin.sock) nor host:port',
    ])
  })

  it('a TCP socket whose port is not a port (127.0.0.1:99999999): refused at validate, not by Node live', () => {
    const text = onHaproxy('  - {action: wait, for: 1}\n').replace('unix:/run/haproxy/admin.sock', '127.0.0.1:99999999')
    expect(problems('port.yaml', text)).toEqual([
      'port.yaml:4:13: targets.haproxy.socket: haproxy runtime API address "127.0.0.1:99999999": port 99999999 is not a TCP port; expected 1 to 65535',
    ])
  })

  it('a slow start declared for a pool with no backend: refused there', () => {
    const text = onHaproxy('  - {action: wait, for: 1}\n').replace('slowStart: {blue: 30}', 'slowStart: {red: 30}')
    expect(problems('slow.yaml', text)).toEqual([
      'slow.yaml:6:22: targets.haproxy.slowStart.red: no pool "red" in targets.haproxy.backends; it has blue, green',
    ])
  })

  it('cycle: a pool with no backend, listing the backends', () => {
    expect(problems('pool.yaml', onHaproxy('  - {action: cycle, pool: red, batch: 1}\n'))).toEqual([
      'pool.yaml:11:27: steps[0].pool: no backend for pool "red" in targets.haproxy.backends; it has blue, green',
    ])
  })

  it('cycle: slowStart on a HAProxy pool is refused (set it in haproxy.cfg)', () => {
    expect(problems('ss.yaml', onHaproxy('  - {action: cycle, pool: blue, batch: 1, slowStart: 60}\n'))).toEqual([
      'ss.yaml:11:54: steps[0].slowStart: HAProxy cannot change slow start at runtime; set slowstart in haproxy.cfg and give it in targets.haproxy.slowStart',
    ])
  })

  it('cycle: failoverPercent on a HAProxy pool is refused (no panic threshold; backup servers are the nearest)', () => {
    expect(problems('fo.yaml', onHaproxy('  - {action: cycle, pool: blue, batch: 1, failoverPercent: 50}\n'))).toEqual([
      'fo.yaml:11:60: steps[0].failoverPercent: HAProxy has no panic threshold or routing failover to set; the nearest are `backup` servers (and `option allbackups`) in haproxy.cfg',
    ])
  })

  it('ramp: with neither targets.dns nor a ramp map, both are named', () => {
    const text = onHaproxy('  - {action: ramp, set: be_green, schedule: [10, 100]}\n').replace('    rampMap: /etc/haproxy/ramp.map\n', '')
    expect(problems('noramp.yaml', text)).toEqual([
      'noramp.yaml:10:5: steps[0]: a ramp step needs a weighted DNS record (targets.dns) or a HAProxy ramp map (targets.haproxy.rampMap)',
    ])
  })

  it('ramp: the set names a backend, not a pool', () => {
    expect(problems('set.yaml', onHaproxy('  - {action: ramp, set: green, schedule: [10, 100]}\n'))).toEqual([
      'set.yaml:11:25: steps[0].set: no backend "green" in targets.haproxy.backends; it has be_blue, be_green',
    ])
  })

  it('ramp: one backend is nothing to ramp between', () => {
    const text = onHaproxy('  - {action: ramp, set: be_green, schedule: [10, 100]}\n')
      .replace('{blue: be_blue, green: be_green}', '{green: be_green}')
      .replace('slowStart: {blue: 30}', 'slowStart: {green: 30}')
    expect(problems('one.yaml', text)).toEqual([
      'one.yaml:11:25: steps[0].set: a ramp moves traffic between backends: targets.haproxy.backends needs at least two',
    ])
  })

  it('ramp: a bake of a second is no problem, since HAProxy routes each request by the map as it is (TTL 0)', () => {
    const runbook = parseRunbook('bake.yaml', onHaproxy('  - {action: ramp, set: be_green, schedule: [10, 100], bake: 1}\n'))
    expect(runbook.steps[0]).toMatchObject({bake: 1})
  })

  it('restrict and lift: with neither a listener nor a restriction map, both are named', () => {
    const text = onHaproxy('  - {action: restrict, type: sync, paths: [/sync/]}\n  - {action: lift, type: sync}\n').replace(
      '    restrictMap: /etc/haproxy/restricted.map\n',
      '',
    )
    expect(problems('norules.yaml', text)).toEqual([
      "norules.yaml:10:5: steps[0]: a restrict step needs targets.listener (the load balancer listener its rules go on) or targets.haproxy.restrictMap (the map of HAProxy's restriction snippet)",
      "norules.yaml:11:5: steps[1]: a lift step needs targets.listener (the load balancer listener its rules go on) or targets.haproxy.restrictMap (the map of HAProxy's restriction snippet)",
    ])
  })

  it('restrict: headers are refused on HAProxy (restrict by paths)', () => {
    expect(problems('hdr.yaml', onHaproxy('  - {action: restrict, type: sync, paths: [/sync/], headers: {x-client: [mobile]}}\n'))).toEqual([
      'hdr.yaml:11:62: steps[0].headers: HAProxy matches headers only where its config names them (x-client); restrict sync by paths',
    ])
  })

  it('restrict: a path with a wildcard anywhere but the end is not a prefix', () => {
    expect(problems('glob.yaml', onHaproxy('  - {action: restrict, type: sync, paths: [/sync/*, /api/*/sync]}\n'))).toEqual([
      `glob.yaml:11:53: steps[0].paths[1]: the path "/api/*/sync" is not a prefix; HAProxy's restriction map matches path prefixes (a * only at the end)`,
    ])
  })

  it('a gate on a pool with no backend: refused, listing the pools', () => {
    expect(problems('gpool.yaml', onHaproxy('  - {action: check, gate: {metric: error-rate, threshold: 1, pool: red}}\n'))).toEqual([
      'gpool.yaml:11:68: steps[0].gate.pool: no pool named "red" in targets; pools are blue, green',
    ])
  })

  it('a latency-p99 gate on metrics source haproxy: refused (HAProxy keeps no percentiles)', () => {
    expect(problems('p99.yaml', onHaproxy('  - {action: check, gate: {metric: latency-p99, threshold: 200}}\n'))).toEqual([
      "p99.yaml:11:36: steps[0].gate.metric: HAProxy's stats have no latency percentiles (only an average of the last 1024 requests), so a latency-p99 gate cannot be read from metrics source haproxy; gate on error-rate, or read latency from Prometheus",
    ])
  })
})

describe('a HAProxy runbook rehearses against its scenario', () => {
  const rehearsed = (pool: string) => `name: hx-rehearsal
targets:
  haproxy:
    socket: /run/haproxy/admin.sock
    backends: {${pool}: be_mailbox}
  metrics: {source: haproxy}
rehearsal: {scenario: outlook-2026-haproxy, startAt: 320}
steps:
  - {action: cycle, pool: ${pool}, batch: 5, budget: 5, gate: {metric: healthy-targets, threshold: 70, window: 20, interval: 10, successes: 1}}
`

  it('backends are the simulated pools: the cycle drains and returns every server of the pool', async () => {
    const io = new RecordingIO('no-tty')
    const report = await rehearse(
      parseRunbook('hx-rehearsal.yaml', rehearsed('mailbox')),
      {operator: 'test', io, signal: new AbortController().signal},
      {pace: null},
    )
    expect(report.run.outcome, report.run.message).toBe('completed')
    const out = io
      .of('mutation')
      .filter((e) => e.mutation.phase === 'outcome' && e.mutation.kind === 'deregister')
      .flatMap((e) => e.mutation.before as string[])
    expect(out).toHaveLength(20)
  })

  it('a backend for a pool the scenario lacks: refused at that backend', async () => {
    const runbook = parseRunbook('hx-rehearsal.yaml', rehearsed('calendar'))
    await expect(rehearse(runbook, {operator: 'test', io: new RecordingIO('no-tty'), signal: new AbortController().signal}, {pace: null})).rejects.toThrow(
      'hx-rehearsal.yaml:5:26: the rehearsal scenario outlook-2026-haproxy has no pool "calendar"; its pools are mailbox',
    )
  })
})
