import {FailedError} from '../errors.js'
import type {CallerIdentity} from '../ports/backend.js'
import {awsCall, AwsCallError} from './errors.js'
import type {StsCalls} from './sdk.js'

/** Who a live run's AWS calls act as: the account, and the user or role's ARN. */
export type {CallerIdentity} from '../ports/backend.js'

/**
 * The account and principal the run's credentials belong to, from STS GetCallerIdentity, so a
 * confirmation says which account it will change (a profile left in a shell must not look like
 * the one meant). The call needs no IAM permission; it fails only when there are no credentials,
 * they are not valid, or the endpoint cannot be reached, and a live run needs those before
 * anything else, so the failure stops the run before it reads or changes anything.
 */
export async function callerIdentity(sts: StsCalls, signal?: AbortSignal): Promise<CallerIdentity> {
  const out = await awsCall('STS', 'GetCallerIdentity', "the run's credentials", (abortSignal) => sts.getCallerIdentity({}, abortSignal), signal).catch(
    (error: Error) => {
      // An interrupt, or a setting refused before the call (a profile that is not there), says what it is.
      if (!(error instanceof AwsCallError)) throw error
      throw new FailedError(`cannot tell which AWS account the run would act in: ${error.message}; nothing was read or changed`)
    },
  )
  if (!out.Account || !out.Arn) throw new FailedError('STS GetCallerIdentity answered without an account or ARN; nothing was read or changed')
  return {account: out.Account, arn: out.Arn}
}
