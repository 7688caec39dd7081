import {describe, expect, it} from 'vitest'
import {AwsCallInterrupted} from '../../../src/aws/errors.js'
import {callerIdentity} from '../../../src/aws/identity.js'
import type {StsCalls} from '../../../src/aws/sdk.js'
import {FailedError, InputError} from '../../../src/errors.js'
import {awsError, fakeCalls} from './fake-calls.js'

describe("the run's AWS identity over a fake of STS's narrow interface", () => {
  it('is the account and the ARN GetCallerIdentity answers', async () => {
    const {calls, made} = fakeCalls<StsCalls>({
      getCallerIdentity: async () => ({Account: '123456789012', Arn: 'arn:aws:iam::123456789012:user/ops', UserId: 'AIDA'}),
    })
    expect(await callerIdentity(calls)).toEqual({account: '123456789012', arn: 'arn:aws:iam::123456789012:user/ops'})
    expect(made).toEqual([{call: 'getCallerIdentity', input: {}, signal: true}])
  })

  it('credentials STS will not name stop the run, saying nothing was read or changed and naming the call', async () => {
    const {calls} = fakeCalls<StsCalls>({
      getCallerIdentity: async () => Promise.reject(awsError('InvalidClientTokenId', 'The security token included in the request is invalid.', 403)),
    })
    const error = await callerIdentity(calls).catch((e: Error) => e)
    expect(error).toBeInstanceOf(FailedError)
    expect((error as Error).message).toBe(
      "cannot tell which AWS account the run would act in: STS GetCallerIdentity on the run's credentials failed: InvalidClientTokenId: The security token included in the request is invalid.; nothing was read or changed",
    )
  })

  it('no credentials at all is said as the AWS CLI says it, with the ways sluice takes them', async () => {
    const {calls} = fakeCalls<StsCalls>({
      getCallerIdentity: async () => Promise.reject(awsError('CredentialsProviderError', 'Could not load credentials from any providers')),
    })
    await expect(callerIdentity(calls)).rejects.toThrow(/NoCredentials: Unable to locate credentials\. .*--profile or AWS_PROFILE/)
  })

  it('an answer without an account is refused', async () => {
    const {calls} = fakeCalls<StsCalls>({getCallerIdentity: async () => ({Arn: 'arn:aws:iam::123456789012:user/ops'})})
    await expect(callerIdentity(calls)).rejects.toThrow('STS GetCallerIdentity answered without an account or ARN; nothing was read or changed')
  })

  it('an interrupt, and a setting refused before the call, are passed on as they are', async () => {
    const stop = new AbortController()
    stop.abort()
    const {calls} = fakeCalls<StsCalls>({getCallerIdentity: async () => ({})})
    await expect(callerIdentity(calls, stop.signal)).rejects.toBeInstanceOf(AwsCallInterrupted)
    const refused = new InputError('--profile nope: there is no profile nope')
    const settings = fakeCalls<StsCalls>({getCallerIdentity: async () => Promise.reject(refused)})
    await expect(callerIdentity(settings.calls)).rejects.toBe(refused)
  })
})
