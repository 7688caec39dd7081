import {describe, expect, it} from 'vitest'
import {inProcess as sluice} from '../helpers/command.js'
import {dnsRunbook, mutating, useLiveFixture, weights, type Fixture} from './live-fixture.js'
import {liveCopy} from './live-runbook.js'

let fx: Fixture
useLiveFixture((current) => (fx = current))

const asIam: Record<string, string> = {Route53: 'route53', ELBv2: 'elasticloadbalancing', CloudWatch: 'cloudwatch'}

/** The IAM actions of every AWS call the proxy saw since `from`. */
function callsSince(from: number): string[] {
  return [...new Set(fx.proxy.calls.slice(from).flatMap((c) => (asIam[c.service] ? [`${asIam[c.service]}:${c.operation}`] : [])))]
}

describe('sluice plan --live: what a run would change, read from the real resources', () => {
  it('reads only, with calls the read-only policy allows, and tells the shipped runbook in live numbers', async () => {
    const file = liveCopy('runbooks/outlook-staged-return.yaml', fx.targets, fx.dir, fx.hook)
    const policy = await sluice(['iam-policy', file, '--read-only', '--json'], {env: fx.env})
    expect(policy.code, policy.stderr).toBe(0)
    const allowed = (JSON.parse(policy.stdout) as {Statement: Array<{Action: string[]}>}).Statement.flatMap((s) => s.Action)
    for (const op of mutating) expect(allowed.map((a) => a.split(':')[1])).not.toContain(op)

    const before = fx.proxy.calls.length
    const out = await sluice(['plan', file, '--live'], {env: fx.env})
    expect(out.code, out.stderr).toBe(0)
    const made = callsSince(before)
    expect(made).toEqual(
      expect.arrayContaining(['route53:ListResourceRecordSets', 'elasticloadbalancing:DescribeTargetHealth', 'elasticloadbalancing:DescribeRules']),
    )
    for (const call of made) expect(allowed, call).toContain(call)
    expect(fx.proxy.calls.slice(before).filter((c) => mutating.includes(c.operation))).toEqual([])

    // Where it read, and what it found: the fixture's record (mailbox 100, maintenance 0) and its 8 targets.
    expect(out.stdout).toMatch(
      /Read from AWS account 123456789012 \(us-east-1\) at the endpoint http:\/\/127\.0\.0\.1:\d+ \(AWS_ENDPOINT_URL[^)]*\), not AWS's own \(nothing was changed\):/,
    )
    expect(out.stdout).toContain(`${fx.targets.record} A (TTL 1 s) now: mailbox=100 maintenance=0`)
    expect(out.stdout).toMatch(/target group mailbox \(targetgroup\/[\w-]+\) now: 8 of 8 targets healthy/)
    // Each step from what the one before leaves: maintenance takes everything, then mailbox comes back.
    expect(out.stdout).toContain('weights mailbox=100 maintenance=0 → mailbox=0 maintenance=100, one change per step')
    expect(out.stdout).toContain('weights mailbox=0 maintenance=100 → mailbox=1 maintenance=99 → mailbox=5 maintenance=95')
    expect(out.stdout).toContain('all 8 targets now in the group')
    expect(out.stdout).toContain('Every step finds what it expects.')
    expect(out.stdout).not.toContain('\n   ! ')
    // Nothing changed.
    expect(await weights(fx.targets.zoneId, fx.targets.record)).toEqual({mailbox: 100, maintenance: 0})

    const json = await sluice(['plan', file, '--live', '--json'], {env: fx.env})
    expect(json.code, json.stderr).toBe(0)
    const plan = JSON.parse(json.stdout) as {live: {on: string; now: string[]; drift: number}; steps: Array<{details: string[]; drift?: string[]}>}
    expect(plan.live.drift).toBe(0)
    expect(plan.live.now.join('\n')).toContain(fx.targets.targetGroupArn)
  }, 60_000)

  it('marks each step that finds the world other than it expects, and says what the step will do about it', async () => {
    // Someone froze by hand, and background-sync is already turned away on the listener.
    const frozen = await sluice(['freeze', '--reason', 'INC-1 by hand'], {env: fx.env})
    expect(frozen.code, frozen.stderr).toBe(0)
    const restricted = await sluice(['restrict', '--type', 'background-sync', '--path', '/sync/*', '--listener', fx.targets.listenerArn, '--yes'], {
      env: fx.env,
    })
    expect(restricted.code, restricted.stderr).toBe(0)
    const file = dnsRunbook(
      fx,
      'expects',
      `  listener: ${fx.targets.listenerArn}
steps:
  - action: freeze
    reason: INC-2 recovery
  - action: restrict
    type: background-sync
    paths: ['/sync/*']
  - action: lift
    type: mobile-sync
  - action: ramp
    set: mailbox
    schedule: [10, 50, 100]
    bake: 1s
  - action: unfreeze
`,
    )
    const before = fx.proxy.calls.length
    const out = await sluice(['plan', file, '--live'], {env: fx.env})
    expect(out.code, out.stderr).toBe(0)
    expect(fx.proxy.calls.slice(before).filter((c) => mutating.includes(c.operation))).toEqual([])
    const marks = out.stdout.split('\n').filter((l) => l.startsWith('   ! '))
    expect(marks).toEqual([
      expect.stringMatching(
        /^ {3}! a change freeze is in place already \(frozen since \S+ by .+: INC-1 by hand\): the step leaves it and sets none of its own$/,
      ),
      expect.stringMatching(
        /^ {3}! background-sync is already restricted on listener listener\/[\w-]+\/\w+: the step leaves that rule as it is and changes nothing$/,
      ),
      expect.stringMatching(/^ {3}! mobile-sync is not restricted on listener listener\/[\w-]+\/\w+: there is nothing to lift, and the step changes nothing$/),
      `   ! mailbox has 100% of ${fx.targets.record} now, more than the ramp's first step of 10%: its first change takes mailbox down to 10%`,
      expect.stringMatching(
        /^ {3}! the freeze in place is not this run's \(frozen since \S+ by .+: INC-1 by hand\): the step leaves it in place \(force: true lifts it\)$/,
      ),
    ])
    expect(out.stdout).toContain('5 of 5 steps find the world other than they expect (marked !).')
    // The same plan a live run shows before it asks (with no terminal and no --yes, it then refuses).
    const run = await sluice(['run', file], {env: fx.env})
    expect(run.stdout + run.stderr).toContain('! not as the runbook expects: mailbox has 100%')
  }, 60_000)
})
