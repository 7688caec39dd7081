import {expect} from 'vitest'
import {AwsCallError} from '../../../src/aws/errors.js'

/** One call a fake was asked to make: its name and its input. */
export interface Made {
  call: string
  input: unknown
  /** Whether the adapter handed the call an abort signal (awsCall's deadline or the run's interrupt). */
  signal: boolean
}

/**
 * A fake of a narrow AWS interface (src/aws/sdk.ts): every call is recorded, and answered by the
 * function given for it. A call it has no answer for fails the test, naming the call.
 */
export function fakeCalls<T extends object>(answers: Partial<T>): {calls: T; made: Made[]} {
  const made: Made[] = []
  const calls = new Proxy({} as T, {
    get(_target, name: string | symbol) {
      if (typeof name !== 'string' || name === 'then') return undefined
      return async (input: unknown, abortSignal?: AbortSignal) => {
        made.push({call: name, input, signal: abortSignal !== undefined})
        const answer = (answers as Record<string, ((input: unknown, abortSignal?: AbortSignal) => Promise<unknown>) | undefined>)[name]
        if (!answer) throw new Error(`the fake has no answer for ${name}`)
        return answer(input, abortSignal)
      }
    },
  })
  return {calls, made}
}

/** The names of the calls made, in order. */
export const names = (made: Made[]): string[] => made.map((m) => m.call)

/** An error as the SDK throws a service's refusal: its name is the error code, with the answer's metadata. */
export function awsError(code: string, message = `${code}: the fake says no`, status = 400): Error {
  const error = new Error(message)
  error.name = code
  return Object.assign(error, {$metadata: {httpStatusCode: status}})
}

/** AccessDenied, as IAM answers a call the caller may not make. */
export const accessDenied = (): Error => awsError('AccessDenied', 'User: arn:aws:iam::123456789012:user/ops is not authorized to perform this action', 403)

/**
 * What an operator must be told of a denied call: an AwsCallError naming the service's call, the
 * resource, and the IAM permission to grant.
 */
export async function expectDenied(promise: Promise<unknown>, permission: string, resource: string): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(AwsCallError)
  const message = (error as Error).message
  expect(message).toContain(`on ${resource} was denied`)
  expect(message).toContain(`the caller needs IAM permission ${permission}`)
  expect(message).toContain('`sluice iam-policy RUNBOOK` prints every permission a runbook needs')
}
