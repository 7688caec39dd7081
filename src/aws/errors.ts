import {FailedError, SluiceError} from '../errors.js'
import {awsDeadlines, type AwsDeadlines} from './clients.js'

/** The IAM action prefix of each service sluice calls. */
const iamPrefix = {
  Route53: 'route53',
  ELBv2: 'elasticloadbalancing',
  CloudWatch: 'cloudwatch',
  DynamoDB: 'dynamodb',
  S3: 's3',
  EC2: 'ec2',
  STS: 'sts',
  SSM: 'ssm',
  ECS: 'ecs',
} as const

/** Calls whose IAM action is not named as the call is. */
const iamActions: Record<string, string> = {'S3 ListObjectsV2': 's3:ListBucket'}

/** The IAM action a call needs. */
export const iamActionOf = (service: AwsService, operation: string): string => iamActions[`${service} ${operation}`] ?? `${iamPrefix[service]}:${operation}`

export type AwsService = keyof typeof iamPrefix

const denied = new Set(['AccessDenied', 'AccessDeniedException', 'UnauthorizedOperation', 'AuthorizationError', 'UnauthorizedAccess'])

/**
 * An AWS call that failed, said the way an operator needs it: which operation, on which resource,
 * and for a permission problem which IAM action to grant.
 */
export class AwsCallError extends FailedError {
  constructor(
    readonly service: AwsService,
    readonly operation: string,
    readonly resource: string,
    readonly code: string,
    detail: string,
  ) {
    super(
      denied.has(code)
        ? `${service} ${operation} on ${resource} was denied: the caller needs IAM permission ${iamActionOf(service, operation)} (${detail}); \`sluice iam-policy RUNBOOK\` prints every permission a runbook needs`
        : `${service} ${operation} on ${resource} failed: ${code}: ${detail}`,
    )
  }
}

/** An AWS call stopped because the run was interrupted (Ctrl-C, SIGTERM), not because it failed. */
export class AwsCallInterrupted extends FailedError {
  constructor(
    readonly service: AwsService,
    readonly operation: string,
    readonly resource: string,
  ) {
    super(`${service} ${operation} on ${resource} was stopped by the interrupt`)
  }
}

/**
 * Runs one AWS call and turns any failure into an AwsCallError naming the operation and resource.
 * The call gets an abort signal to hand to its narrow interface (src/aws/sdk.ts): it aborts at the
 * call's deadline (awsDeadlines().callMs, retries included) or when `signal` does. A call that
 * ignores it still gives up at the deadline here, though its request runs on in the background.
 */
export async function awsCall<T>(
  service: AwsService,
  operation: string,
  resource: string,
  call: (abortSignal: AbortSignal) => Promise<T>,
  signal?: AbortSignal,
): Promise<T> {
  if (signal?.aborted) throw stoppedBy(signal, service, operation, resource)
  const deadlines = awsDeadlines()
  const deadline = AbortSignal.timeout(deadlines.callMs)
  const abortSignal = signal ? AbortSignal.any([signal, deadline]) : deadline
  let onAbort = () => {}
  const stopped = new Promise<never>((_, reject) => {
    onAbort = () => reject(abortSignal.reason)
    abortSignal.addEventListener('abort', onAbort, {once: true})
  })
  stopped.catch(() => {})
  const pending = call(abortSignal)
  pending.catch(() => {})
  try {
    return await Promise.race([pending, stopped])
  } catch (error) {
    // sluice's own errors say what they mean already: an AwsCallError from a nested call, or a
    // setting refused while the call's client was made (no region, a profile that is not there).
    if (error instanceof SluiceError) throw error
    if (signal?.aborted) throw stoppedBy(signal, service, operation, resource)
    if (deadline.aborted)
      throw new AwsCallError(
        service,
        operation,
        resource,
        'Timeout',
        `no answer within ${inSeconds(deadlines.callMs)} (requests time out after ${inSeconds(deadlines.requestMs)} and are retried)`,
      )
    const e = error as {name?: string; Code?: string; message?: string; $metadata?: {httpStatusCode?: number}}
    const code = e.name && e.name !== 'Error' ? e.name : (e.Code ?? 'Error')
    if (code === 'TimeoutError') throw new AwsCallError(service, operation, resource, code, timeoutDetail(e.message ?? '', deadlines))
    if (code === 'CredentialsProviderError') throw new AwsCallError(service, operation, resource, 'NoCredentials', noCredentials)
    const status = e.$metadata?.httpStatusCode
    const detail = (e.message ?? String(error)).split('\n')[0]
    // An answer that is not the service's own (a proxy's or load balancer's error page) cannot be
    // parsed, and the parse error says little; its HTTP status says more.
    if (status && (code === 'SyntaxError' || /^Unknown/.test(code)))
      throw new AwsCallError(service, operation, resource, `HTTP ${status}`, `an answer that is not the service's own (${detail})`)
    throw new AwsCallError(service, operation, resource, code, detail)
  } finally {
    abortSignal.removeEventListener('abort', onAbort)
  }
}

/** What the AWS CLI says when no credentials are found, with the ways sluice takes them. */
const noCredentials =
  'Unable to locate credentials. You can configure credentials by running "aws configure", name a profile with --profile or AWS_PROFILE, or set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (on EC2, ECS or Lambda the role\'s credentials are found by themselves)'

/** The caller's signal: an interruption, or a deadline of the caller's own (AbortSignal.timeout). */
function stoppedBy(signal: AbortSignal, service: AwsService, operation: string, resource: string): FailedError {
  if ((signal.reason as Error | undefined)?.name === 'TimeoutError')
    return new AwsCallError(service, operation, resource, 'Timeout', 'no answer within the time it was given')
  return new AwsCallInterrupted(service, operation, resource)
}

/** The SDK's timeout messages name its own package; an operator needs which limit and how long. */
function timeoutDetail(message: string, deadlines: AwsDeadlines): string {
  if (/establish a connection/.test(message)) return `no connection within ${inSeconds(deadlines.connectMs)}`
  if (/requestTimeout|inactivity/.test(message)) return `no answer within ${inSeconds(deadlines.requestMs)}`
  return message.split('\n')[0]
}

/** `30 s`, `1.7 s`: a deadline as the operator set it, to a tenth of a second. */
const inSeconds = (ms: number): string => `${Math.round(ms / 100) / 10} s`
