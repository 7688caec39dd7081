import type {Runbook} from '../runbook/load.js'

interface Statement {
  Sid: string
  Effect: 'Allow'
  Action: string[]
  Resource: string[]
  Condition?: Record<string, Record<string, string[]>>
}

/** `arn:…:listener-rule/app/NAME/LB/LISTENER/*` for the rules of a listener. */
function listenerRules(listenerArn: string): string {
  return `${listenerArn.replace(':listener/', ':listener-rule/')}/*`
}

const toSid = (text: string) => text.replace(/[^A-Za-z0-9]/g, '')

/**
 * The least-privilege IAM policy for a runbook: only the actions its steps and gates call, on its
 * own resources where the API allows it. Describe calls do not support resource-level permissions,
 * so they take "*".
 */
export function iamPolicy(runbook: Runbook): {Version: string; Statement: Statement[]} {
  const statements: Statement[] = []
  const actions = new Set(runbook.steps.map((s) => s.action))
  const gates = runbook.steps.flatMap((s) => ('gate' in s && s.gate ? [s.gate] : []))
  const {dns, targetGroups, listener, metrics} = runbook.targets

  if (dns && actions.has('ramp')) {
    const zone = dns.zone.replace(/^\/hostedzone\//, '')
    statements.push({
      Sid: 'ReadWeightedRecord',
      Effect: 'Allow',
      Action: ['route53:ListResourceRecordSets'],
      Resource: [`arn:aws:route53:::hostedzone/${zone}`],
    })
    statements.push({
      Sid: 'ChangeWeights',
      Effect: 'Allow',
      Action: ['route53:ChangeResourceRecordSets'],
      Resource: [`arn:aws:route53:::hostedzone/${zone}`],
      Condition: {
        'ForAllValues:StringEquals': {
          'route53:ChangeResourceRecordSetsNormalizedRecordNames': [dns.record.toLowerCase().replace(/\.$/, '')],
          'route53:ChangeResourceRecordSetsRecordTypes': [dns.type],
          'route53:ChangeResourceRecordSetsActions': ['UPSERT'],
        },
      },
    })
    statements.push({Sid: 'WaitForInSync', Effect: 'Allow', Action: ['route53:GetChange'], Resource: ['arn:aws:route53:::change/*']})
  }

  const cycled = runbook.steps.flatMap((s) => (s.action === 'cycle' ? [s] : []))
  if (targetGroups && cycled.length > 0) {
    const arns = [...new Set(cycled.map((s) => targetGroups[s.pool]))]
    const write = ['elasticloadbalancing:DeregisterTargets', 'elasticloadbalancing:RegisterTargets']
    if (cycled.some((s) => s.slowStart !== undefined || s.failoverPercent !== undefined)) write.push('elasticloadbalancing:ModifyTargetGroupAttributes')
    statements.push({Sid: 'CycleTargets', Effect: 'Allow', Action: write, Resource: arns})
  }
  if (targetGroups && (cycled.length > 0 || gates.some((g) => g.metric === 'healthy-targets'))) {
    statements.push({
      Sid: 'ReadTargetHealth',
      Effect: 'Allow',
      Action: ['elasticloadbalancing:DescribeTargetHealth', 'elasticloadbalancing:DescribeTargetGroupAttributes'],
      Resource: ['*'],
    })
  }

  if (listener && (actions.has('restrict') || actions.has('lift'))) {
    const write: Statement = {Sid: 'RestrictionRules', Effect: 'Allow', Action: [], Resource: []}
    if (actions.has('restrict')) {
      write.Action.push('elasticloadbalancing:CreateRule', 'elasticloadbalancing:AddTags')
      write.Resource.push(listener, listenerRules(listener))
    }
    if (actions.has('lift')) {
      write.Action.push('elasticloadbalancing:DeleteRule')
      if (!write.Resource.includes(listenerRules(listener))) write.Resource.push(listenerRules(listener))
    }
    statements.push(write)
    statements.push({Sid: 'FindRestrictionRules', Effect: 'Allow', Action: ['elasticloadbalancing:DescribeRules', 'elasticloadbalancing:DescribeTags'], Resource: ['*']})
  }

  const cloudwatchGates = metrics?.source === 'cloudwatch' && (gates.some((g) => g.metric !== 'healthy-targets') || cycled.some((s) => s.headroom !== undefined))
  if (cloudwatchGates) statements.push({Sid: 'GateMetrics', Effect: 'Allow', Action: ['cloudwatch:GetMetricData'], Resource: ['*']})

  for (const s of statements) s.Sid = toSid(s.Sid)
  return {Version: '2012-10-17', Statement: statements}
}
