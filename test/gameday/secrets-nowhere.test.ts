import {chmodSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {sluice, type CliResult} from '../helpers/cli.js'
import {useLiveFixture, type Fixture} from '../aws/live-fixture.js'
import {MetricsServer} from './metrics-server.js'
import {writeTimeline} from './timeline.js'

// A night with every kind of secret an operator hands sluice in one incident, on the AWS path:
// the team's Prometheus wants a bearer token (from the variable the runbook names) and a token in
// its URL's query string, and a proxy in front of it quotes both back in its 401; a remediation
// hook is handed a deploy token and prints it when it fails; someone pastes an endpoint URL with
// an access key and its secret in it. Every command is run as the operator would, and then
// everything sluice printed, journalled or wrote (the state directory, the postmortem timeline)
// is searched for each secret. None may be there; each must have been sent where it was meant to go.

let fx: Fixture
useLiveFixture((current) => (fx = current))
const metrics = new MetricsServer()
beforeEach(() => metrics.start())
afterEach(() => metrics.stop())

/** The secrets seeded: distinct, long enough that no other text holds them by chance. */
const secrets = {
  header: 'hdr-9f2c7e41b0d8a6',
  query: 'qry-5b8e1d3f7a9c20',
  hookToken: 'dpl-3c6a9e0f2b7d41',
  endpointPassword: 'epw-7d1b4f8a2c6e93',
}
const bearer = `Bearer ${secrets.header}`

/** Every file under `dir`, as text. */
function filesUnder(dir: string): Array<{file: string; text: string}> {
  if (!existsSync(dir)) return []
  return readdirSync(dir, {recursive: true, encoding: 'utf8'})
    .map((f) => join(dir, f))
    .filter((f) => statSync(f).isFile())
    .map((file) => ({file, text: readFileSync(file, 'utf8')}))
}

describe('game day: secrets nowhere', () => {
  it('an endpoint URL with a key in it, a Prometheus that echoes its token, a hook that prints its own: none of it printed, journalled or written', async () => {
    const printed: CliResult[] = []
    const env = {...fx.env, SLUICE_OPERATOR: 'alice', PROM_AUTH: bearer, DEPLOY_TOKEN: secrets.hookToken}
    const cli = async (args: string[], extra: Record<string, string> = {}) => {
      const out = await sluice(args, {env: {...env, ...extra}})
      printed.push(out)
      return out
    }
    const remediate = join(fx.dir, 'remediate.sh')
    writeFileSync(remediate, `#!/bin/sh\necho "deploying with token $DEPLOY_TOKEN to $1" >&2\nexit 1\n`)
    chmodSync(remediate, 0o755)

    const runbook = join(fx.dir, 'mailbox-return.yaml')
    writeFileSync(
      runbook,
      `name: mailbox-return
targets:
  dns: {zone: ${fx.targets.zoneId}, record: ${fx.targets.record}, ttl: 1, sets: {mailbox: mailbox, maintenance: maintenance}}
  targetGroups: {mailbox: ${fx.targets.targetGroupArn}}
  listener: ${fx.targets.listenerArn}
  metrics:
    source: prometheus
    url: ${metrics.url}/?access_token=${secrets.query}
    authorizationEnv: PROM_AUTH
    queries:
      error-rate: 'error-rate{pool="$pool"}'
steps:
  - {action: freeze, reason: INC-5120 mailbox}
  - {action: ramp, name: Park on maintenance, set: maintenance, schedule: [100], bake: 1}
  - {action: ramp, name: First traffic back, set: mailbox, schedule: [10], bake: 2, gate: {metric: error-rate, threshold: 2, pool: mailbox, window: 60, interval: 1, successes: 1}}
`,
    )

    // 02:10 Someone pastes the emulator's URL with a key and its secret in it, as a flag and as a variable.
    const keyed = fx.env.AWS_ENDPOINT_URL.replace('://', `://AKIDEXAMPLE:${secrets.endpointPassword}@`)
    const asFlag = await cli(['plan', runbook, '--live', '--endpoint-url', keyed])
    expect(asFlag.code, asFlag.stderr).toBe(2)
    expect(asFlag.stderr).toMatch(/--endpoint-url/)
    const asVariable = await cli(['run', runbook, '--yes'], {AWS_ENDPOINT_URL: keyed})
    expect(asVariable.code, asVariable.stderr).toBe(2)
    expect(asVariable.stderr).toMatch(/AWS_ENDPOINT_URL/)

    // 02:12 The plan, and the return: the gate's Prometheus answers 401, quoting the request back.
    const plan = await cli(['plan', runbook, '--live'])
    expect(plan.code, plan.stderr).toBe(0)
    metrics.echoing.add('error-rate')
    const run = await cli(['run', runbook, '--yes', '--json'])
    expect(run.code, run.stderr).not.toBe(0)
    const runId = (JSON.parse(run.stdout) as {runId: string}).runId
    // The token and the query token were sent, as given, with every query the gate made.
    const gateQueries = metrics.sent.filter((s) => s.url.includes('error-rate'))
    expect(gateQueries.length).toBeGreaterThan(0)
    for (const sent of gateQueries) {
      expect(sent.authorization).toBe(bearer)
      expect(new URL(sent.url, 'http://x').searchParams.get('access_token')).toBe(secrets.query)
    }
    // What the gate was answered is in the journal, scrubbed: the operator still learns why.
    const journal = await cli(['journal', runId, '--json'])
    expect(journal.code, journal.stderr).toBe(0)
    expect(journal.stdout).toMatch(/401/)
    expect(journal.stdout).toMatch(/REDACTED/)

    // 02:20 Back the way it came: the way back is gated too, and holds while the gate cannot read.
    const held = await cli(['rollback', runId, '--yes', '--json'])
    expect(held.code, held.stderr).not.toBe(0)
    expect((JSON.parse(held.stdout) as {outcome: string}).outcome).toBe('held')
    // The proxy's token is fixed; the way back goes on from where it held.
    metrics.echoing.clear()
    metrics.set('error-rate', 'mailbox', 0.1)
    const back = await cli(['rollback', runId, '--yes', '--json'])
    expect(back.code, back.stderr + back.stdout).toBe(0)

    // 02:30 A cycle whose remediation fails, printing its token.
    const cycle = join(fx.dir, 'mailbox-cycle.yaml')
    writeFileSync(
      cycle,
      `name: mailbox-cycle
targets:
  targetGroups: {mailbox: ${fx.targets.targetGroupArn}}
steps:
  - action: cycle
    pool: mailbox
    batch: 1
    budget: 50%
    restart: {command: ['${fx.hook}', restart, '{id}']}
    remediate: {command: ['${remediate}', '{id}'], env: [DEPLOY_TOKEN]}
`,
    )
    const cycled = await cli(['run', cycle, '--yes', '--json'])
    expect(cycled.code, cycled.stderr).toBe(1)
    const cycleId = (JSON.parse(cycled.stdout) as {runId: string}).runId
    expect(cycled.stdout).toMatch(/deploying with token \[DEPLOY_TOKEN redacted\]/)

    // 02:40 Everything the bridge and the postmortem read.
    for (const id of [runId, cycleId]) {
      for (const view of [[], ['--json'], ['--markdown']]) expect((await cli(['journal', id, ...view])).code).toBe(0)
      expect((await cli(['watch', id, '--json'])).code).not.toBe(2)
    }
    for (const args of [[runbook], ['--run', runId]]) {
      const status = await cli(['status', ...args, '--json'])
      expect(status.code, status.stderr).toBe(0)
    }
    const timeline = await writeTimeline('secrets-nowhere', 'Game day: secrets nowhere', [runId, cycleId], env)

    // The postmortem says which account the changes were made in (moto's own).
    expect(timeline.text).toMatch(/- \*\*AWS:\*\* account 123456789012 as arn:aws:\S+, region us-east-1/)

    const seeded = Object.values(secrets)
    for (const out of printed) for (const secret of seeded) expect(out.stdout + out.stderr, `${secret} in the output of a command`).not.toContain(secret)
    const written = [...filesUnder(fx.env.SLUICE_STATE), {file: timeline.file, text: timeline.text}]
    // Both runs' journals are among what is searched.
    for (const id of [runId, cycleId]) expect(written.some(({file}) => file.includes(id))).toBe(true)
    for (const {file, text} of written) for (const secret of seeded) expect(text, `${secret} in ${file}`).not.toContain(secret)
  })
})
