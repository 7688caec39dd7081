import {afterEach, describe, expect, it} from 'vitest'
import {AwsClients, awsDeadlines} from '../../src/aws/clients.js'
import {awsCall, AwsCallError} from '../../src/aws/errors.js'
import {InputError} from '../../src/errors.js'

const saved = process.env.SLUICE_AWS_DEADLINE_SECONDS
afterEach(() => {
  if (saved === undefined) delete process.env.SLUICE_AWS_DEADLINE_SECONDS
  else process.env.SLUICE_AWS_DEADLINE_SECONDS = saved
})

/** A call that never answers until its signal aborts, like an endpoint that accepts and goes quiet. */
const hang = (signal: AbortSignal) => new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(new Error('aborted')), {once: true}))

describe('the AWS call deadlines', () => {
  it('are 3 s to connect, 10 s per attempt and 30 s per call by default', () => {
    expect(awsDeadlines({})).toEqual({connectMs: 3_000, requestMs: 10_000, callMs: 30_000})
  })

  it('follow $SLUICE_AWS_DEADLINE_SECONDS: a third of it per attempt, and a connect timeout of 3 s or the attempt’s if shorter', () => {
    expect(awsDeadlines({SLUICE_AWS_DEADLINE_SECONDS: '120'})).toEqual({connectMs: 3_000, requestMs: 40_000, callMs: 120_000})
    expect(awsDeadlines({SLUICE_AWS_DEADLINE_SECONDS: '6'})).toEqual({connectMs: 2_000, requestMs: 2_000, callMs: 6_000})
    expect(awsDeadlines({SLUICE_AWS_DEADLINE_SECONDS: '1'})).toEqual({connectMs: 333, requestMs: 333, callMs: 1_000})
  })

  it('refuse a bad $SLUICE_AWS_DEADLINE_SECONDS as bad input naming it, when the clients are made and before a call is tried', async () => {
    process.env.SLUICE_AWS_DEADLINE_SECONDS = 'soon'
    const message = '$SLUICE_AWS_DEADLINE_SECONDS (how long one AWS call may take, retries included): expected seconds from 1 to 600 (unset: 30), got "soon"'
    expect(() => new AwsClients({})).toThrow(InputError)
    expect(() => new AwsClients({})).toThrow(message)
    let called = false
    await expect(
      awsCall('Route53', 'ChangeResourceRecordSets', 'Z1 app.example.com. A', () => {
        called = true
        return Promise.resolve()
      }),
    ).rejects.toThrow(message)
    expect(called).toBe(false)
  })

  it('stop a call that never answers at the deadline the variable gives, saying how long it waited', async () => {
    process.env.SLUICE_AWS_DEADLINE_SECONDS = '1'
    let given: AbortSignal | undefined
    const failed = await awsCall('Route53', 'ChangeResourceRecordSets', 'Z1 app.example.com. A', (signal) => {
      given = signal
      return hang(signal)
    }).catch((error: unknown) => error)
    expect(failed).toBeInstanceOf(AwsCallError)
    expect((failed as AwsCallError).code).toBe('Timeout')
    expect((failed as Error).message).toBe(
      'Route53 ChangeResourceRecordSets on Z1 app.example.com. A failed: Timeout: no answer within 1 s (requests time out after 0.3 s and are retried)',
    )
    // The call itself was told to stop (the SDK aborts its request), not just left behind.
    expect(given?.aborted).toBe(true)
  })
})
