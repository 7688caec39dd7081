import {describe, expect, it} from 'vitest'
import {root, sluiceInProcess} from '../helpers/command.js'

interface Policy {
  Version: string
  Statement: Array<{Sid: string; Effect: string; Action: string[]; Resource: string[]; Condition?: Record<string, Record<string, string[]>>}>
}

describe('sluice iam-policy (in process)', () => {
  it('a DNS-only runbook needs Route 53 on its zone and CloudWatch reads, and nothing on ELBv2', async () => {
    const {exit, stdout, stderr} = await sluiceInProcess(['iam-policy', `${root}runbooks/regional-dns-ramp.yaml`, '--json'])
    expect(exit, stderr).toBe(0)
    const policy = JSON.parse(stdout) as Policy
    expect(policy.Version).toBe('2012-10-17')
    const actions = policy.Statement.flatMap((s) => s.Action)
    expect(actions).toEqual(
      expect.arrayContaining(['route53:ListResourceRecordSets', 'route53:ChangeResourceRecordSets', 'route53:GetChange', 'cloudwatch:GetMetricData']),
    )
    expect(actions.filter((a) => a.startsWith('elasticloadbalancing:'))).toEqual([])
    const change = policy.Statement.find((s) => s.Action.includes('route53:ChangeResourceRecordSets'))!
    expect(change.Resource).toEqual(['arn:aws:route53:::hostedzone/Z2FDTNDATAQYW2'])
    expect(change.Condition!['ForAllValues:StringEquals']).toMatchObject({
      'route53:ChangeResourceRecordSetsNormalizedRecordNames': ['api.example.com'],
      'route53:ChangeResourceRecordSetsActions': ['UPSERT'],
    })
    for (const s of policy.Statement) expect(s.Effect).toBe('Allow')
  })

  it('without --json prints the same policy as JSON on stdout', async () => {
    const file = `${root}runbooks/outlook-staged-return.yaml`
    const [text, json] = [await sluiceInProcess(['iam-policy', file]), await sluiceInProcess(['iam-policy', file, '--json'])]
    expect(text.exit, text.stderr).toBe(0)
    expect(JSON.parse(text.stdout)).toEqual(JSON.parse(json.stdout))
    const policy = JSON.parse(text.stdout) as Policy
    const register = policy.Statement.find((s) => s.Action.includes('elasticloadbalancing:RegisterTargets'))!
    expect(register.Resource).toEqual(['arn:aws:elasticloadbalancing:eu-west-1:123456789012:targetgroup/mailbox/6d0ecf831eec9f09'])
  })
})
