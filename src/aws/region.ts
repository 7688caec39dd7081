import {InputError} from '../errors.js'
import type {Locate} from '../ports/backend.js'
import type {AwsTargets} from './backend.js'

/** The region an ARN names (`arn:aws:elasticloadbalancing:eu-west-1:…`), or none. */
export const arnRegion = (arn: string): string | undefined => /^arn:[^:]+:[^:]+:([a-z0-9-]+):/.exec(arn)?.[1]

/**
 * The region the targets' ARNs name (`arn:aws:elasticloadbalancing:eu-west-1:123:…`), or none.
 * One run drives one region: ARNs in two are refused, naming both, at the first ARN.
 */
export function targetsRegion(targets: AwsTargets, locate: Locate): string | undefined {
  const arns: Array<{path: Array<string>; arn: string}> = [
    ...Object.entries(targets.targetGroups ?? {}).map(([pool, arn]) => ({path: ['targets', 'targetGroups', pool], arn})),
    ...(targets.listener ? [{path: ['targets', 'listener'], arn: targets.listener}] : []),
  ]
  const regions = new Map<string, string[]>()
  for (const {path, arn} of arns) {
    const region = arnRegion(arn)
    if (region) regions.set(region, [...(regions.get(region) ?? []), path.slice(1).join('.')])
  }
  if (regions.size > 1) {
    const first = arns.find((a) => /^arn:/.test(a.arn))!
    const named = [...regions].map(([region, paths]) => `${region} (${paths.join(', ')})`)
    throw new InputError(
      `${locate(first.path)}: targets: the runbook's ARNs name two regions, ${named.join(' and ')}; one run drives one region, so split the runbook`,
    )
  }
  return [...regions.keys()][0]
}
