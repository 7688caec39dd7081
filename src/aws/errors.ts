import {FailedError} from '../errors.js'

/** The IAM action prefix of each service sluice calls. */
const iamPrefix = {Route53: 'route53', ELBv2: 'elasticloadbalancing', CloudWatch: 'cloudwatch', DynamoDB: 'dynamodb'} as const

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
        ? `${service} ${operation} on ${resource} was denied: the caller needs IAM permission ${iamPrefix[service]}:${operation} (${detail})`
        : `${service} ${operation} on ${resource} failed: ${code}: ${detail}`,
    )
  }
}

/** Runs one AWS call and turns any failure into an AwsCallError naming the operation and resource. */
export async function awsCall<T>(service: AwsService, operation: string, resource: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call()
  } catch (error) {
    if (error instanceof AwsCallError) throw error
    const e = error as {name?: string; Code?: string; message?: string}
    const code = e.name && e.name !== 'Error' ? e.name : e.Code ?? 'Error'
    throw new AwsCallError(service, operation, resource, code, (e.message ?? String(error)).split('\n')[0])
  }
}

