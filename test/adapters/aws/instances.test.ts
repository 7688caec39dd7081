import type {DescribeInstancesCommandInput, Instance} from '@aws-sdk/client-ec2'
import {describe, expect, it} from 'vitest'
import {InstanceAddresses} from '../../../src/aws/instances.js'
import type {Ec2Calls} from '../../../src/aws/sdk.js'
import {accessDenied, expectDenied, fakeCalls} from './fake-calls.js'

/** EC2 knowing these instances, answering a page of at most `perPage` of them, with NextToken for the rest. */
function ec2(instances: Instance[], perPage = 1000) {
  return fakeCalls<Ec2Calls>({
    describeInstances: async (input) => {
      const ids = input.Filters?.find((f) => f.Name === 'instance-id')?.Values ?? []
      const found = instances.filter((i) => ids.includes(i.InstanceId!))
      const from = Number(input.NextToken ?? 0)
      const page = found.slice(from, from + perPage)
      return {Reservations: [{Instances: page}], ...(from + perPage < found.length ? {NextToken: String(from + perPage)} : {})}
    },
  })
}

const running = (id: string, ip: string): Instance => ({InstanceId: id, State: {Name: 'running'}, PrivateIpAddress: ip})

describe('EC2 instance addresses over a fake of their narrow interface', () => {
  it('gives an instance its private address, looked up once per run; an IP target is its own address', async () => {
    const {calls, made} = ec2([running('i-0000000000000000a', '10.0.0.1'), running('i-0000000000000000b', '10.0.0.2')], 1)
    const book = new InstanceAddresses(calls)
    const first = await book.lookUp(['i-0000000000000000a', 'i-0000000000000000b', '10.0.9.9'])
    expect(Object.fromEntries(first)).toEqual({'i-0000000000000000a': {ip: '10.0.0.1'}, 'i-0000000000000000b': {ip: '10.0.0.2'}, '10.0.9.9': {ip: '10.0.9.9'}})
    // One filter for both, in two pages.
    expect(made.map((m) => (m.input as DescribeInstancesCommandInput).NextToken)).toEqual([undefined, '1'])
    expect((made[0].input as DescribeInstancesCommandInput).Filters).toEqual([{Name: 'instance-id', Values: ['i-0000000000000000a', 'i-0000000000000000b']}])
    await book.lookUp(['i-0000000000000000a'])
    expect(made).toHaveLength(2)
  })

  it('says why a target has no address: terminated, unknown, without one, a Lambda function, a load balancer', async () => {
    const {calls} = ec2([
      {InstanceId: 'i-0000000000000000c', State: {Name: 'terminated'}, PrivateIpAddress: '10.0.0.3'},
      {InstanceId: 'i-0000000000000000d', State: {Name: 'pending'}},
    ])
    const found = await new InstanceAddresses(calls).lookUp([
      'i-0000000000000000c',
      'i-0000000000000000d',
      'i-0000000000000000e',
      'arn:aws:lambda:eu-west-1:123456789012:function:f',
      'arn:aws:elasticloadbalancing:eu-west-1:123456789012:loadbalancer/app/inner/1',
    ])
    expect([...found.values()]).toEqual([
      {none: "EC2 instance i-0000000000000000c is terminated: its address may be another instance's by now"},
      {none: 'EC2 instance i-0000000000000000d (pending) has no private address'},
      {none: 'EC2 DescribeInstances knows no instance i-0000000000000000e in this account and region'},
      {none: 'arn:aws:lambda:eu-west-1:123456789012:function:f is a Lambda function (a lambda target), which has no address'},
      {
        none: 'arn:aws:elasticloadbalancing:eu-west-1:123456789012:loadbalancer/app/inner/1 is a load balancer (an alb target), which has no address of its own',
      },
    ])
  })

  it('asks for a hundred instances a call', async () => {
    const ids = Array.from({length: 150}, (_, k) => `i-${k.toString(16).padStart(17, '0')}`)
    const {calls, made} = ec2(ids.map((id, k) => running(id, `10.1.${Math.floor(k / 256)}.${k % 256}`)))
    const found = await new InstanceAddresses(calls).lookUp(ids)
    expect(found.size).toBe(150)
    expect(made.map((m) => (m.input as DescribeInstancesCommandInput).Filters![0].Values!.length)).toEqual([100, 50])
  })

  it('AccessDenied names the call, the instance and the IAM permission to grant', async () => {
    const {calls} = fakeCalls<Ec2Calls>({describeInstances: async () => Promise.reject(accessDenied())})
    await expectDenied(new InstanceAddresses(calls).lookUp(['i-0000000000000000a']), 'ec2:DescribeInstances', 'instance i-0000000000000000a')
  })
})
