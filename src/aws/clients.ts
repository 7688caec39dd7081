import type {CloudWatchClient} from '@aws-sdk/client-cloudwatch'
import type {DynamoDBClient} from '@aws-sdk/client-dynamodb'
import type {ElasticLoadBalancingV2Client} from '@aws-sdk/client-elastic-load-balancing-v2'
import type {Route53Client} from '@aws-sdk/client-route-53'

export interface AwsOptions {
  region?: string
  profile?: string
  /** --endpoint-url; the SDK also honours AWS_ENDPOINT_URL on its own. */
  endpoint?: string
  /** Attempts per call, the first included; throttling is retried with adaptive backoff. */
  maxAttempts?: number
}

/**
 * How long one AWS call may take, in milliseconds. An endpoint that accepts a connection and never
 * answers must not hang a run (and its locks) for good, nor make Ctrl-C wait.
 *
 * - connect: 3 s. A TCP handshake to an AWS endpoint takes milliseconds; 3 s covers a lost SYN
 *   retransmitted once (Linux retries after 1 s) and still fails fast when the endpoint is gone.
 * - request: 10 s per attempt, from sending to the whole answer. The calls sluice makes answer in
 *   well under a second; GetMetricData for a few minutes of one-minute points is the slowest. Ten
 *   times that is a hung attempt, and the SDK retries it (a timeout is transient).
 * - call: 30 s for a call with all its retries (awsCall): room for two hung attempts or a run of
 *   throttled ones with adaptive backoff, then the call fails naming the operation. Retries are
 *   bounded by this deadline, not only by the attempt count.
 */
export const awsDeadlines = {connectMs: 3_000, requestMs: 10_000, callMs: 30_000} as const

/**
 * The AWS clients of one run, created on first use: a rehearsal and --help never load the SDK.
 * One shared configuration: the standard credential chain (or --profile), adaptive retries for
 * throttling, connect and request timeouts (awsDeadlines), and sluice's user agent so calls can
 * be told apart in CloudTrail.
 */
export class AwsClients {
  private route53Client?: Promise<Route53Client>
  private elbv2Client?: Promise<ElasticLoadBalancingV2Client>
  private cloudwatchClient?: Promise<CloudWatchClient>
  private dynamodbClient?: Promise<DynamoDBClient>

  constructor(readonly options: AwsOptions) {
    // sluice supports Node 20 (see engines); the SDK's multi-line notice about newer Node versions
    // is not something an operator can act on mid-incident, and it would break one-line errors.
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true'
  }

  private config(region?: string) {
    const {profile, endpoint, maxAttempts} = this.options
    return {
      region: region ?? this.options.region ?? process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION,
      ...(profile ? {profile} : {}),
      ...(endpoint ? {endpoint} : {}),
      retryMode: 'adaptive',
      maxAttempts: maxAttempts ?? 5,
      // The options of the SDK's NodeHttpHandler. Without throwOnRequestTimeout the SDK only logs
      // a warning when requestTimeout passes and goes on waiting.
      requestHandler: {connectionTimeout: awsDeadlines.connectMs, requestTimeout: awsDeadlines.requestMs, throwOnRequestTimeout: true},
      customUserAgent: 'sluice',
    }
  }

  route53(): Promise<Route53Client> {
    // Route 53 is global; its API lives in us-east-1 whatever region the rest of the run uses.
    this.route53Client ??= import('@aws-sdk/client-route-53').then((m) => new m.Route53Client(this.config('us-east-1')))
    return this.route53Client
  }

  elbv2(): Promise<ElasticLoadBalancingV2Client> {
    this.elbv2Client ??= import('@aws-sdk/client-elastic-load-balancing-v2').then((m) => new m.ElasticLoadBalancingV2Client(this.config()))
    return this.elbv2Client
  }

  cloudwatch(): Promise<CloudWatchClient> {
    this.cloudwatchClient ??= import('@aws-sdk/client-cloudwatch').then((m) => new m.CloudWatchClient(this.config()))
    return this.cloudwatchClient
  }

  dynamodb(): Promise<DynamoDBClient> {
    this.dynamodbClient ??= import('@aws-sdk/client-dynamodb').then((m) => new m.DynamoDBClient(this.config()))
    return this.dynamodbClient
  }

  destroy(): void {
    for (const client of [this.route53Client, this.elbv2Client, this.cloudwatchClient, this.dynamodbClient]) void client?.then((c) => c.destroy())
  }
}
