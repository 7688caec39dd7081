import {isIP} from 'node:net'
import type {AddressBook} from '../ports/control-plane.js'
import {awsCall} from './errors.js'
import type {Ec2Calls} from './sdk.js'

/** Instance ids per DescribeInstances call, well inside the values one filter takes. */
const perCall = 100

const instanceId = /^i-[0-9a-f]{8,17}$/

type Found = {ip: string} | {none: string}

/**
 * What a target of an ELBv2 group is, by its id, when it is not an instance: an IP target is its
 * own address; a Lambda function or an ALB has none to give.
 */
function notAnInstance(id: string): Found {
  if (isIP(id) !== 0) return {ip: id}
  if (/^arn:[^:]+:lambda:/.test(id)) return {none: `${id} is a Lambda function (a lambda target), which has no address`}
  if (/^arn:[^:]+:elasticloadbalancing:[^:]*:[^:]*:loadbalancer\//.test(id))
    return {none: `${id} is a load balancer (an alb target), which has no address of its own`}
  return {none: `${id} is neither an EC2 instance nor an IP address`}
}

/**
 * The private address of each EC2 instance a target group lists, from DescribeInstances (an
 * instance target group names instances by id only), for hooks that name `{ip}`. An instance's
 * primary private address stays with it for its life, stopped or running, so each is looked up
 * once per run. A terminated instance has none: its address may be another instance's by now.
 */
export class InstanceAddresses implements AddressBook {
  private readonly known = new Map<string, Found>()

  constructor(private readonly ec2: Ec2Calls) {}

  async lookUp(targetIds: string[], signal?: AbortSignal): Promise<Map<string, Found>> {
    const unknown = [...new Set(targetIds.filter((id) => instanceId.test(id) && !this.known.has(id)))]
    if (unknown.length > 0) {
      for (let k = 0; k < unknown.length; k += perCall) {
        const ids = unknown.slice(k, k + perCall)
        const label = ids.length === 1 ? `instance ${ids[0]}` : `${ids.length} instances (${ids[0]} …)`
        // A filter rather than InstanceIds: one unknown id would fail the whole call.
        let token: string | undefined
        do {
          const page = await awsCall(
            'EC2',
            'DescribeInstances',
            label,
            (abortSignal) => this.ec2.describeInstances({Filters: [{Name: 'instance-id', Values: ids}], ...(token ? {NextToken: token} : {})}, abortSignal),
            signal,
          )
          for (const instance of (page.Reservations ?? []).flatMap((r) => r.Instances ?? [])) {
            const id = instance.InstanceId!
            const state = instance.State?.Name
            const ip = instance.PrivateIpAddress ?? instance.Ipv6Address
            this.known.set(
              id,
              state === 'terminated'
                ? {none: `EC2 instance ${id} is terminated: its address may be another instance's by now`}
                : ip
                  ? {ip}
                  : {none: `EC2 instance ${id} (${state ?? 'in no known state'}) has no private address`},
            )
          }
          token = page.NextToken
        } while (token)
        for (const id of ids) if (!this.known.has(id)) this.known.set(id, {none: `EC2 DescribeInstances knows no instance ${id} in this account and region`})
      }
    }
    return new Map(targetIds.map((id) => [id, this.known.get(id) ?? notAnInstance(id)]))
  }
}
