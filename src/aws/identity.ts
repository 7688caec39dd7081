import {FailedError} from '../errors.js'
import type {AwsClients} from './clients.js'
import {awsCall, AwsCallInterrupted} from './errors.js'

/** Who a live run's AWS calls act as: the account, and the user or role's ARN. */
export interface CallerIdentity {
  account: string
  arn: string
}

/**
 * The account and principal the run's credentials belong to, from STS GetCallerIdentity, so a
 * confirmation says which account it will change (a profile left in a shell must not look like
 * the one meant). The call needs no IAM permission; it fails only when there are no credentials,
 * they are not valid, or the endpoint cannot be reached, and a live run needs those before
 * anything else, so the failure stops the run before it reads or changes anything.
 */
export async function callerIdentity(clients: AwsClients, signal?: AbortSignal): Promise<CallerIdentity> {
  const {GetCallerIdentityCommand} = await import('@aws-sdk/client-sts')
  const client = await clients.sts()
  const out = await awsCall(
    'STS',
    'GetCallerIdentity',
    "the run's credentials",
    (abortSignal) => client.send(new GetCallerIdentityCommand({}), {abortSignal}),
    signal,
  ).catch((error: Error) => {
    if (error instanceof AwsCallInterrupted) throw error
    throw new FailedError(`cannot tell which AWS account the run would act in: ${error.message}; nothing was read or changed`)
  })
  if (!out.Account || !out.Arn) throw new FailedError('STS GetCallerIdentity answered without an account or ARN; nothing was read or changed')
  return {account: out.Account, arn: out.Arn}
}
