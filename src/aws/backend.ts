import type {Backend, BackendFace, BackendProblem, BackendStep, IamStatement, PoolSplit, RestartIamNeeds} from '../ports/backend.js'

/** What a runbook's targets say of AWS: the fields this family reads. */
export interface AwsTargets {
  dns?: {zone: string; record: string; type: string; sets: Record<string, string>}
  targetGroups?: Record<string, string>
  listener?: string
}

/** `arn:…:listener-rule/app/NAME/LB/LISTENER/*` for the rules of a listener. */
export const listenerRules = (listenerArn: string): string => `${listenerArn.replace(':listener/', ':listener-rule/')}/*`

/** A record's name as Route 53 keeps it: lower case, with its final dot. */
const fqdn = (record: string): string => record.toLowerCase().replace(/\.?$/, '.')

/** sluice finds its own restriction rules by their tags, from any machine; Describe calls take no resource-level permissions. */
/** Target health, read by preflight, a cycle and a healthy-targets gate. */
const readTargetHealth: IamStatement = {
  Sid: 'ReadTargetHealth',
  Effect: 'Allow',
  Action: ['elasticloadbalancing:DescribeTargetHealth', 'elasticloadbalancing:DescribeTargetGroupAttributes'],
  Resource: ['*'],
}

/**
 * An instance target's private address, for a hook that names {ip}: an instance target group
 * lists instance ids only. DescribeInstances takes no resource-level permissions.
 */
const findAddresses: IamStatement = {Sid: 'FindInstanceAddresses', Effect: 'Allow', Action: ['ec2:DescribeInstances'], Resource: ['*']}

const readRecord = (zone: string): IamStatement => ({
  Sid: 'ReadWeightedRecord',
  Effect: 'Allow',
  Action: ['route53:ListResourceRecordSets'],
  Resource: [`arn:aws:route53:::hostedzone/${zone}`],
})

const findRules: IamStatement = {
  Sid: 'FindRestrictionRules',
  Effect: 'Allow',
  Action: ['elasticloadbalancing:DescribeRules', 'elasticloadbalancing:DescribeTags'],
  Resource: ['*'],
}

/** What an ARN names for a weighted forward: a listener rule's actions, or a listener's default actions. */
export function forwardOwner(arn: string): 'rule' | 'listener' | undefined {
  if (/^arn:aws[\w-]*:elasticloadbalancing:[^:]*:\d*:listener-rule\/app\/[^/]+\/[^/]+\/[^/]+\/[^/]+$/.test(arn)) return 'rule'
  if (/^arn:aws[\w-]*:elasticloadbalancing:[^:]*:\d*:listener\/app\/[^/]+\/[^/]+\/[^/]+$/.test(arn)) return 'listener'
  return undefined
}

/** An ALB listener rule's (or listener's default) forward action, weighted between target groups. */
function forwardSplit(
  rule: string | undefined,
  path: ReadonlyArray<PropertyKey>,
  targetGroups: Record<string, string>,
): PoolSplit | {problems: BackendProblem[]} {
  const owner = rule === undefined ? undefined : forwardOwner(rule)
  if (rule === undefined || !owner)
    return {
      problems: [
        {
          path: rule === undefined ? path : [...path, 'rule'],
          message: `expected rule: the ARN of the ALB listener rule whose forward action splits traffic between target groups (arn:aws:elasticloadbalancing:REGION:ACCOUNT:listener-rule/app/…), or of the listener, for its default action${rule === undefined ? '' : `; got ${rule}`}`,
        },
      ],
    }
  const [describe, modify] = owner === 'rule' ? ['DescribeRules', 'ModifyRule'] : ['DescribeListeners', 'ModifyListener']
  return {
    at: rule,
    label: owner === 'rule' ? `listener rule ${rule}` : `the default action of listener ${rule}`,
    pools: Object.keys(targetGroups),
    locks: [`elbv2:${rule}`],
    iam: [
      // Describe calls take no resource-level permissions.
      {Sid: 'ReadWeightedForward', Effect: 'Allow', Action: [`elasticloadbalancing:${describe}`], Resource: ['*']},
      {Sid: 'ChangeWeightedForward', Effect: 'Allow', Action: [`elasticloadbalancing:${modify}`], Resource: [rule]},
    ],
  }
}

/** AWS as a backend: weights on a weighted Route 53 record, pools as ELBv2 target groups, restrictions as a listener's rules. */
export function awsBackend(targets: AwsTargets): Backend {
  const {dns, targetGroups = {}, listener} = targets
  return {
    family: 'aws',
    name: 'AWS',
    pools: new Set([...Object.values(dns?.sets ?? {}), ...Object.keys(targetGroups)]),
    targetPools: Object.keys(targetGroups),
    weightedSets: dns?.sets,
    sets: {noun: 'weighted set', plural: 'weighted sets', at: 'targets.dns.sets'},
    weightsLabel: dns?.record,
    restrictionsLabel: listener,
    poolSplit: (rule, path) => forwardSplit(rule, path, targetGroups),
    poolLabel: (pool) => targetGroups[pool],
    poolInPlan: (pool) => `${pool} (${targetGroups[pool]})`,
    actsThroughAws: true,
    poolPath: (pool) => ['targets', 'targetGroups', pool],
    setPath: (set) => ['targets', 'dns', 'sets', set],
    // A target group is only ever cycled: one with no targets has nothing to be.
    poolsMayBeSorry: false,
    frontedBy: 'alb',
    locks: {
      weights: () => (dns ? [`route53:${dns.zone}/${fqdn(dns.record)}/${dns.type}`] : []),
      pool: (pool) => (targetGroups[pool] ? [`elbv2:${targetGroups[pool]}`] : []),
      restrictions: () => (listener ? [`elbv2:${listener}`] : []),
    },
    iam: {
      weights() {
        if (!dns) return []
        const zone = `arn:aws:route53:::hostedzone/${dns.zone}`
        return [
          readRecord(dns.zone),
          {
            Sid: 'ChangeWeights',
            Effect: 'Allow',
            Action: ['route53:ChangeResourceRecordSets'],
            Resource: [zone],
            Condition: {
              'ForAllValues:StringEquals': {
                'route53:ChangeResourceRecordSetsNormalizedRecordNames': [dns.record.toLowerCase().replace(/\.$/, '')],
                'route53:ChangeResourceRecordSetsRecordTypes': [dns.type],
                'route53:ChangeResourceRecordSetsActions': ['UPSERT'],
              },
            },
          },
          {Sid: 'WaitForInSync', Effect: 'Allow', Action: ['route53:GetChange'], Resource: ['arn:aws:route53:::change/*']},
        ]
      },
      pool(pool, {attributes, addresses}) {
        const arn = targetGroups[pool]
        if (!arn) return []
        const write = ['elasticloadbalancing:DeregisterTargets', 'elasticloadbalancing:RegisterTargets']
        if (attributes) write.push('elasticloadbalancing:ModifyTargetGroupAttributes')
        return [{Sid: 'CycleTargets', Effect: 'Allow', Action: write, Resource: [arn]}, readTargetHealth, ...(addresses ? [findAddresses] : [])]
      },
      restart: (pool, needs) => (targetGroups[pool] ? restartStatements(targetGroups[pool], needs) : []),
      restrict: () =>
        listener
          ? [
              {
                Sid: 'RestrictionRules',
                Effect: 'Allow',
                // DeleteRule: a rule of the type that restricts nothing is replaced (src/aws/rules.ts).
                Action: ['elasticloadbalancing:CreateRule', 'elasticloadbalancing:AddTags', 'elasticloadbalancing:DeleteRule'],
                Resource: [listener, listenerRules(listener)],
              },
              findRules,
            ]
          : [],
      lift: () =>
        listener
          ? [{Sid: 'RestrictionRules', Effect: 'Allow', Action: ['elasticloadbalancing:DeleteRule'], Resource: [listenerRules(listener)]}, findRules]
          : [],
      read: () => [
        ...(dns ? [readRecord(dns.zone)] : []),
        ...(Object.keys(targetGroups).length > 0 ? [readTargetHealth] : []),
        ...(listener ? [findRules] : []),
      ],
    },
    problems: () => [],
    stepProblems(step: BackendStep, path): BackendProblem[] {
      // A listener rule either matches a request or not: its fixed-response action cannot be
      // weighted against a forward, so a share of a type can only be turned away elsewhere.
      const partial = 'an ALB listener rule turns away every request it matches (a fixed response cannot be weighted against a forward)'
      if (step.action === 'restrict' && step.share !== undefined && step.share < 100)
        return [
          {
            path: [...path, 'share'],
            message: `${partial}, so it cannot turn away ${step.share}% of ${step.type}: restrict all of it, restrict a narrower path, or put the share behind HAProxy (targets.haproxy)`,
          },
        ]
      if (step.action === 'lift' && step.schedule !== undefined)
        return [
          {
            path: [...path, 'schedule'],
            message: `${partial}, so ${step.type} cannot be let back by degrees: lift it at once (no schedule), lift narrower paths one at a time, or ramp the pool that serves it with weighted-target-groups`,
          },
        ]
      if (step.action === 'cycle' && step.pool !== undefined && !targetGroups[step.pool])
        return [
          {
            path: [...path, 'pool'],
            message: `no target group for pool "${step.pool}" in targets.targetGroups; it has ${Object.keys(targetGroups).join(', ') || 'none'}`,
          },
        ]
      return []
    },
  }
}

/** AWS's face: targets that name a record, target groups or a listener (and, by src/runbook/targets.ts, those that name no family). */
export const awsFace: BackendFace<AwsTargets> = {
  family: 'aws',
  names: (targets) => targets.dns !== undefined || targets.targetGroups !== undefined || targets.listener !== undefined,
  backend: awsBackend,
}

/**
 * What a restart adapter needs, scoped to the region and account of the pool's target group: SSM
 * may send that one document to instances there (an AWS-owned document, such as
 * AWS-RunShellScript, has no account in its ARN) and read, list and cancel its commands; EC2 may
 * reboot instances there; ECS may read that one service and read and stop the tasks of its
 * cluster. Instances and tasks are not known when the policy is written: they are the group's.
 */
function restartStatements(targetGroup: string, needs: RestartIamNeeds): IamStatement[] {
  const [, partition = 'aws', , region = '*', account = '*'] = targetGroup.split(':')
  const instances = `arn:${partition}:ec2:${region}:${account}:instance/*`
  switch (needs.with) {
    case 'ssm': {
      const owner = needs.document.startsWith('AWS-') ? '' : account
      const document = needs.document.startsWith('arn:') ? needs.document : `arn:${partition}:ssm:${region}:${owner}:document/${needs.document}`
      return [
        {Sid: 'RestartWithSsm', Effect: 'Allow', Action: ['ssm:SendCommand'], Resource: [document, instances]},
        // Run Command's reads and its cancel take no resource-level permissions but the command's own.
        {Sid: 'WaitForSsmCommands', Effect: 'Allow', Action: ['ssm:GetCommandInvocation', 'ssm:ListCommands', 'ssm:CancelCommand'], Resource: ['*']},
      ]
    }
    case 'ec2-reboot':
      return [
        {Sid: 'RebootInstances', Effect: 'Allow', Action: ['ec2:RebootInstances'], Resource: [instances]},
        {Sid: 'ReadInstanceStatus', Effect: 'Allow', Action: ['ec2:DescribeInstanceStatus'], Resource: ['*']},
      ]
    case 'ecs-replace': {
      const cluster = needs.cluster.startsWith('arn:') ? needs.cluster.split('/').at(-1)! : needs.cluster
      const service = needs.service.startsWith('arn:') ? needs.service.split('/').at(-1)! : needs.service
      return [
        {
          Sid: 'ReadEcsService',
          Effect: 'Allow',
          Action: ['ecs:DescribeServices'],
          Resource: [`arn:${partition}:ecs:${region}:${account}:service/${cluster}/${service}`],
        },
        {
          Sid: 'ReplaceEcsTasks',
          Effect: 'Allow',
          Action: ['ecs:DescribeTasks', 'ecs:StopTask'],
          Resource: [`arn:${partition}:ecs:${region}:${account}:task/${cluster}/*`],
        },
        {
          Sid: 'ListEcsTasks',
          Effect: 'Allow',
          Action: ['ecs:ListTasks'],
          Resource: [`arn:${partition}:ecs:${region}:${account}:container-instance/${cluster}/*`],
          Condition: {ArnEquals: {'ecs:cluster': [`arn:${partition}:ecs:${region}:${account}:cluster/${cluster}`]}},
        },
      ]
    }
  }
}
