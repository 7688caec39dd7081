import {Flags} from '@oclif/core'
import {InputError} from '../errors.js'

/**
 * A cycle's restart and remediation from `sluice cycle`'s flags, as a runbook writes them: a
 * command, or one of the AWS ways (src/actions/cycle/schema.ts). The runbook's schema checks the
 * rest, and a problem is reported at the flag that gave it.
 */

/** `NAME=VALUE`, given once per value: a document parameter that takes a list (commands) is given again for each. */
export function ssmParameter(description: string) {
  return Flags.string({description: `${description}: NAME=VALUE, once per value.`, helpValue: 'NAME=VALUE', multiple: true})
}

function parameters(flag: string, given: string[] | undefined): Record<string, string[]> {
  const out: Record<string, string[]> = {}
  for (const pair of given ?? []) {
    const at = pair.indexOf('=')
    if (at <= 0) throw new InputError(`--${flag}: expected NAME=VALUE, such as commands="systemctl restart app", but received: ${pair}`)
    ;(out[pair.slice(0, at)] ??= []).push(pair.slice(at + 1))
  }
  return out
}

export interface RestartFlags {
  restart?: string[]
  'restart-ssm'?: string
  'restart-ssm-parameter'?: string[]
  'restart-ec2-reboot'?: boolean
  'restart-ecs-replace'?: string
  'restart-timeout'?: number
  remediate?: string[]
  'remediate-ssm'?: string
  'remediate-ssm-parameter'?: string[]
  'remediate-timeout'?: number
}

/** The step's restart and remediation from the flags, as a runbook writes them. */
export function restartFromFlags(flags: RestartFlags): Record<string, unknown> {
  const timeout = (seconds: number | undefined) => (seconds === undefined ? {} : {timeout: seconds})
  let restart: Record<string, unknown> | undefined
  if (flags.restart) restart = {command: flags.restart}
  else if (flags['restart-ssm'])
    restart = {ssm: {document: flags['restart-ssm'], parameters: parameters('restart-ssm-parameter', flags['restart-ssm-parameter'])}}
  else if (flags['restart-ec2-reboot']) restart = {'ec2-reboot': {}}
  else if (flags['restart-ecs-replace']) {
    const [cluster, ...rest] = flags['restart-ecs-replace'].split('/')
    if (!cluster || rest.length !== 1 || !rest[0])
      throw new InputError(`--restart-ecs-replace: expected CLUSTER/SERVICE, such as prod/api, but received: ${flags['restart-ecs-replace']}`)
    restart = {'ecs-replace': {cluster, service: rest[0]}}
  }
  let remediate: Record<string, unknown> | undefined
  if (flags.remediate) remediate = {command: flags.remediate}
  else if (flags['remediate-ssm'])
    remediate = {ssm: {document: flags['remediate-ssm'], parameters: parameters('remediate-ssm-parameter', flags['remediate-ssm-parameter'])}}
  return {
    ...(restart ? {restart: {...restart, ...timeout(flags['restart-timeout'])}} : {}),
    ...(remediate ? {remediate: {...remediate, ...timeout(flags['remediate-timeout'])}} : {}),
  }
}
