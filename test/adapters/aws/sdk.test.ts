import {describe, expect, it} from 'vitest'
import type {AwsClients} from '../../../src/aws/clients.js'
import {sdkCalls, type AwsCalls} from '../../../src/aws/sdk.js'
import {InputError} from '../../../src/errors.js'

/** Clients whose every send is recorded: the command's class, its input, and the options it was sent with. */
function recordingClients() {
  const sent: Array<{service: string; command: string; input: unknown; abortSignal: unknown}> = []
  const client = (service: string) => async () => ({
    send: async (command: {constructor: {name: string}; input: unknown}, options: {abortSignal?: AbortSignal}) => {
      sent.push({service, command: command.constructor.name, input: command.input, abortSignal: options.abortSignal})
      return {answered: command.constructor.name}
    },
  })
  const services = ['route53', 'elbv2', 'cloudwatch', 'dynamodb', 's3', 'sts', 'ec2', 'ssm', 'ecs'] as const
  return {clients: Object.fromEntries(services.map((s) => [s, client(s)])) as unknown as AwsClients, sent}
}

describe('the narrow interfaces over the SDK (src/aws/sdk.ts)', () => {
  it("each call sends its service's command of the same name, with the input and the abort signal, and answers with its answer", async () => {
    const {clients, sent} = recordingClients()
    const calls = sdkCalls(clients)
    const signal = new AbortController().signal
    const expected: string[] = []
    for (const service of Object.keys(calls) as Array<keyof AwsCalls>) {
      const methods = calls[service] as unknown as Record<string, (input: unknown, abortSignal?: AbortSignal) => Promise<unknown>>
      for (const [name, call] of Object.entries(methods)) {
        const command = `${name[0].toUpperCase()}${name.slice(1)}Command`
        expected.push(`${service} ${command}`)
        expect(await call({probe: name}, signal)).toEqual({answered: command})
        expect(sent.at(-1)).toEqual({service, command, input: {probe: name}, abortSignal: signal})
      }
    }
    // Every call sluice makes, by service: what `sluice iam-policy` must grant and the fakes must answer.
    expect(expected).toHaveLength(41)
    expect(new Set(sent.map((s) => `${s.service} ${s.command}`))).toEqual(new Set(expected))
  })

  it("a setting refused while the service's client is made reaches the caller as it is", async () => {
    const refused = new InputError('--region: no AWS region is configured')
    const clients = {elbv2: () => Promise.reject(refused)} as unknown as AwsClients
    await expect(sdkCalls(clients).elbv2.describeTargetHealth({TargetGroupArn: 'arn'})).rejects.toBe(refused)
  })
})
