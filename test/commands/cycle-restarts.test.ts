import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {parseRunbook} from '../../src/loader/load-runbook.js'
import {isolatedEnv, type CliResult} from '../helpers/cli.js'
import {sluiceInProcess} from '../helpers/command.js'
import {expectBadInput} from '../helpers/expect-cli.js'
import {inputErrorOf} from '../helpers/scenario-files.js'

// The ways a cycle restarts a target through AWS (ssm, ec2-reboot, ecs-replace), as a runbook and
// as flags: what they accept, what they refuse and where, the plan's line and the permissions.
// Their behaviour against AWS's APIs is test/aws/restart-adapters.test.ts's.

const isolated = isolatedEnv('cycle-restarts')
const savedEnv = Object.fromEntries(Object.keys(isolated).map((k) => [k, process.env[k]]))
beforeAll(() => {
  Object.assign(process.env, isolated)
})
afterAll(() => {
  for (const [k, v] of Object.entries(savedEnv)) {
    if (v === undefined) delete process.env[k]
    else process.env[k] = v
  }
})

async function sluice(args: string[]): Promise<CliResult> {
  const {exit, stdout, stderr} = await sluiceInProcess(args)
  return {code: exit, stdout, stderr}
}

const tg = 'arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/mailbox/0123456789abcdef'
const runbook = (restart: string, more = '') => `name: restarts
targets:
  targetGroups: {mailbox: ${tg}}
steps:
  - action: cycle
    pool: mailbox
    batch: 1
    restart:
${restart}${more}`

describe('a cycle restarting through AWS', () => {
  it('refuses a restart with no way or two, env without a command, ecs-replace as a remediation, and a remediation after one, each where it is', () => {
    const cases: Array<[string, string]> = [
      ['      timeout: 60\n', 'steps[0].restart: expected one of command (argv run here), ssm, ec2-reboot or ecs-replace'],
      [
        '      command: [/bin/true]\n      ec2-reboot: {}\n',
        'steps[0].restart: expected one of command, ssm, ec2-reboot or ecs-replace, not command and ec2-reboot',
      ],
      ['      ssm: {document: AWS-RunShellScript}\n      env: [HOME]\n', 'steps[0].restart.env: env passes variables to a command; only command takes it'],
      ['      ssm: {parameters: {commands: [x]}}\n', 'steps[0].restart.ssm.document'],
    ]
    for (const [restart, message] of cases) {
      const error = inputErrorOf(() => parseRunbook('r.yaml', runbook(restart)))
      expect(error.problems.join('\n')).toMatch(new RegExp(`^r\\.yaml:\\d+:\\d+: ${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`))
    }
    const remediation = inputErrorOf(() =>
      parseRunbook('r.yaml', runbook('      ecs-replace: {cluster: prod, service: api}\n', '    remediate: {ecs-replace: {cluster: prod, service: api}}\n')),
    )
    expect(remediation.problems).toEqual([
      "r.yaml:10:16: steps[0].remediate: the restart replaces each task with a new one, which starts clean: there is nothing to remediate, and the old task's address is gone",
      'r.yaml:10:30: steps[0].remediate.ecs-replace: ecs-replace is a restart (the task is replaced by a new one): give it as restart',
    ])
  })

  it('refuses an AWS way on a pool that is not an AWS target group', () => {
    const haproxy = `name: restarts
targets:
  haproxy: {socket: /run/haproxy.sock, backends: {mailbox: mailbox}}
steps:
  - action: cycle
    pool: mailbox
    batch: 1
    restart: {ec2-reboot: {}}
`
    expect(inputErrorOf(() => parseRunbook('h.yaml', haproxy)).problems).toEqual([
      'h.yaml:8:27: steps[0].restart.ec2-reboot: ec2-reboot restarts targets through AWS, and mailbox is not an AWS target group: restart it with a command',
    ])
  })

  it("says in the plan what each way does and how long it may take; iam-policy grants each way's calls, scoped to the pool's region and account", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-restarts-'))
    const ways: Array<[string, RegExp, string[]]> = [
      [
        '      ssm: {document: AWS-RunShellScript, parameters: {commands: "systemctl restart mailbox"}}\n',
        /drain → restart \(SSM AWS-RunShellScript on each instance, up to 300 s\) → return/,
        ['ssm:SendCommand arn:aws:ssm:us-east-1::document/AWS-RunShellScript arn:aws:ec2:us-east-1:123456789012:instance/*'],
      ],
      [
        '      ssm: {document: Restart-Mailbox}\n      timeout: 120\n',
        /restart \(SSM Restart-Mailbox on each instance, up to 120 s\)/,
        ['ssm:SendCommand arn:aws:ssm:us-east-1:123456789012:document/Restart-Mailbox arn:aws:ec2:us-east-1:123456789012:instance/*'],
      ],
      [
        '      ec2-reboot: {}\n',
        /restart \(EC2 reboot of each instance until its status checks pass, up to 300 s\) → return/,
        ['ec2:RebootInstances arn:aws:ec2:us-east-1:123456789012:instance/*'],
      ],
      [
        '      ecs-replace: {cluster: prod, service: mailbox}\n',
        /restart \(ECS task replaced by service mailbox \(cluster prod\) until the new one is healthy, up to 600 s\) → the service registers the new task/,
        [
          'ecs:DescribeServices arn:aws:ecs:us-east-1:123456789012:service/prod/mailbox',
          'ecs:DescribeTasks,ecs:StopTask arn:aws:ecs:us-east-1:123456789012:task/prod/*',
        ],
      ],
    ]
    for (const [k, [restart, line, grants]] of ways.entries()) {
      const file = join(dir, `way-${k}.yaml`)
      writeFileSync(file, runbook(restart))
      const plan = await sluice(['plan', file])
      expect(plan.code, plan.stderr).toBe(0)
      expect(plan.stdout).toMatch(line)
      const policy = await sluice(['iam-policy', file])
      expect(policy.code, policy.stderr).toBe(0)
      const statements = (JSON.parse(policy.stdout) as {Statement: Array<{Action: string[]; Resource: string[]}>}).Statement
      const said = statements.map((s) => `${s.Action.join(',')} ${s.Resource.join(' ')}`)
      for (const grant of grants) expect(said).toContain(grant)
    }
  })
})

describe('sluice cycle: the AWS ways as flags', () => {
  const base = ['cycle', '--pool', 'east', '--batch', '2', '--scenario', 'two-regions', '--dry-run', '--json']

  it('--restart-ssm with its parameters, --restart-ec2-reboot and --restart-ecs-replace each rehearse, restarting the simulated servers for the scenario’s restart time', async () => {
    for (const [way, planned] of [
      [
        ['--restart-ssm', 'AWS-RunShellScript', '--restart-ssm-parameter', 'commands=systemctl restart api', '--restart-timeout', '120'],
        /restart \(SSM AWS-RunShellScript on each instance, up to 120 s\)/,
      ],
      [['--restart-ec2-reboot'], /restart \(EC2 reboot of each instance until its status checks pass, up to 300 s\)/],
      [
        ['--restart-ecs-replace', 'prod/api', '--restart-timeout', '10m'],
        /restart \(ECS task replaced by service api \(cluster prod\) until the new one is healthy, up to 600 s\)/,
      ],
    ] as const) {
      const ran = await sluice([...base, ...way])
      expect(ran.code, ran.stderr).toBe(0)
      const report = JSON.parse(ran.stdout) as {outcome: string; steps: Array<{message: string}>}
      expect(report.outcome).toBe('completed')
      expect(report.steps[0].message).toBe('cycled 20 targets in 10 batches')
      // The flags reached the step: its plan says the way and its timeout.
      const shown = await sluice(base.filter((arg) => arg !== '--json').concat(way))
      expect(shown.code, shown.stderr).toBe(0)
      expect(shown.stdout + shown.stderr).toMatch(planned)
    }
  })

  it('a bad or lonely flag says which and why', async () => {
    const base = ['cycle', '--pool', 'east', '--batch', '2', '--scenario', 'two-regions', '--dry-run']
    expectBadInput(
      await sluice([...base, '--restart-ecs-replace', 'api']),
      /^Error: --restart-ecs-replace: expected CLUSTER\/SERVICE, such as prod\/api, but received: api$/,
    )
    expectBadInput(await sluice([...base, '--restart-ssm', 'X', '--restart-ssm-parameter', 'commands']), /^Error: --restart-ssm-parameter: expected NAME=VALUE/)
    const lonely = await sluice([...base, '--restart-ssm-parameter', 'commands=x'])
    expect(lonely.code).toBe(2)
    expect(lonely.stderr).toMatch(/--restart-ssm-parameter.*--restart-ssm.*it is a parameter of that document/s)
    const two = await sluice([...base, '--restart', '/bin/true', '--restart-ec2-reboot'])
    expect(two.code).toBe(2)
    expect(two.stderr).toMatch(/--restart.*--restart-ec2-reboot.*a target is restarted one way/s)
  })
})
