import type {CloudWatchClient} from '@aws-sdk/client-cloudwatch'
import type {DynamoDBClient} from '@aws-sdk/client-dynamodb'
import type {S3Client} from '@aws-sdk/client-s3'
import type {EC2Client} from '@aws-sdk/client-ec2'
import type {ECSClient} from '@aws-sdk/client-ecs'
import type {SSMClient} from '@aws-sdk/client-ssm'
import type {ElasticLoadBalancingV2Client} from '@aws-sdk/client-elastic-load-balancing-v2'
import type {Route53Client} from '@aws-sdk/client-route-53'
import type {STSClient} from '@aws-sdk/client-sts'
import {homedir} from 'node:os'
import {join} from 'node:path'
import {InputError} from '../errors.js'
import {checkEndpoints} from '../input/endpoint-url.js'
import {envSeconds} from '../input/env-seconds.js'

export interface AwsOptions {
  region?: string
  profile?: string
  /** --endpoint-url; the SDK also honours AWS_ENDPOINT_URL on its own. */
  endpoint?: string
  /** Attempts per call, the first included (5; the state store's DynamoDB calls, 10). */
  maxAttempts?: number
  /** The region the runbook's ARNs name: the region of the run when none is configured. */
  runbookRegion?: string
}

/** The shared files the SDK reads profiles from, as it finds them. */
function sharedFiles(): {config: string; credentials: string} {
  return {
    config: process.env.AWS_CONFIG_FILE || join(homedir(), '.aws', 'config'),
    credentials: process.env.AWS_SHARED_CREDENTIALS_FILE || join(homedir(), '.aws', 'credentials'),
  }
}

/**
 * The region and profile a run's calls use, settled before the first call. The region is the
 * configured one (--region, AWS_REGION, AWS_DEFAULT_REGION, the profile's), else the one the
 * runbook's ARNs name: an ARN says where its resource is, so a run never reads Route 53 and then
 * fails half-way through its reads for want of a region. A configured region that is not the
 * ARNs' is refused before any call: AWS would answer "not found" for resources that exist. A profile that is in neither shared file
 * is named as such, not left for the credential chain to report as "Could not load credentials".
 */
export async function resolveAws(options: AwsOptions): Promise<AwsOptions> {
  checkEndpoints(options.endpoint)
  const profile = options.profile || process.env.AWS_PROFILE || undefined
  const configured = options.region || process.env.AWS_REGION || process.env.AWS_DEFAULT_REGION || undefined
  let profileRegion: string | undefined
  if (profile || !configured || options.runbookRegion) {
    const {loadSharedConfigFiles} = await import('@smithy/core/config')
    const files = await loadSharedConfigFiles({ignoreCache: true})
    if (profile && !(profile in files.configFile) && !(profile in files.credentialsFile)) {
      const where = sharedFiles()
      throw new InputError(
        `--profile ${profile}: there is no profile ${profile} in the shared config file (${where.config}) or credentials file (${where.credentials}); \`aws configure list-profiles\` lists the profiles there are`,
      )
    }
    profileRegion = files.configFile[profile ?? 'default']?.region || undefined
  }
  const region = configured ?? profileRegion
  if (region && options.runbookRegion && region !== options.runbookRegion) {
    const from = options.region
      ? '--region'
      : process.env.AWS_REGION
        ? 'AWS_REGION'
        : process.env.AWS_DEFAULT_REGION
          ? 'AWS_DEFAULT_REGION'
          : `profile ${profile ?? 'default'}`
    const instead =
      from === '--region' ? '' : from.startsWith('AWS_') ? `, or unset ${from} so that the ARNs give it` : `, or set AWS_REGION=${options.runbookRegion}`
    throw new InputError(
      `--region: ${region} (from ${from}) is not the region the runbook's ARNs name, ${options.runbookRegion}: every call would look for its resources in the wrong region. Give --region ${options.runbookRegion}${instead}`,
    )
  }
  return {...options, ...(profile ? {profile} : {}), region: region ?? options.runbookRegion}
}

/** No region anywhere: said before the first regional call, with where one can come from. */
export function noRegion(): InputError {
  return new InputError(
    '--region: no AWS region is configured and the runbook names none in its ARNs; give --region, set AWS_REGION, or set region in the profile',
  )
}

/** $SLUICE_AWS_DEADLINE_SECONDS: see awsDeadlines. */
const callDeadline = {name: 'SLUICE_AWS_DEADLINE_SECONDS', what: 'how long one AWS call may take, retries included', fallback: 30, min: 1, max: 600}

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
 *
 * $SLUICE_AWS_DEADLINE_SECONDS sets the call's deadline (longer for a slow link; a few seconds in
 * the tests that hang a call): each attempt gets a third of it, as above, and the connect timeout
 * is 3 s or the attempt's, whichever is shorter. A bad value is exit 2 naming it.
 */
export function awsDeadlines(env: NodeJS.ProcessEnv = process.env): AwsDeadlines {
  const callMs = envSeconds(callDeadline, env) * 1000
  const requestMs = Math.round(callMs / 3)
  return {connectMs: Math.min(3_000, requestMs), requestMs, callMs}
}

export interface AwsDeadlines {
  connectMs: number
  /** Per attempt, from sending to the whole answer. */
  requestMs: number
  /** For a call with all its retries (awsCall). */
  callMs: number
}

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
  private s3Client?: Promise<S3Client>
  private stsClient?: Promise<STSClient>
  private ec2Client?: Promise<EC2Client>
  private ssmClient?: Promise<SSMClient>
  private ecsClient?: Promise<ECSClient>
  private resolved?: Promise<AwsOptions>
  /** Read when the clients are made, so a bad $SLUICE_AWS_DEADLINE_SECONDS stops a run before its first call. */
  private readonly deadlines = awsDeadlines()

  constructor(readonly options: AwsOptions) {
    // sluice supports Node 20 (see engines); the SDK's multi-line notice about newer Node versions
    // is not something an operator can act on mid-incident, and it would break one-line errors.
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true'
  }

  /** The options with the region and profile settled (resolveAws), once, before the first client. */
  private settled(regional: boolean): Promise<AwsOptions> {
    this.resolved ??= resolveAws(this.options)
    return this.resolved.then((options) => {
      if (regional && !options.region) throw noRegion()
      return options
    })
  }

  /**
   * The control-plane APIs (Route 53, ELBv2, CloudWatch) retry adaptively: after a throttle the
   * client slows itself, which is what those low per-account limits want.
   */
  private config(options: AwsOptions, region?: string, retry = {mode: 'adaptive', attempts: 5}) {
    const {profile, endpoint, maxAttempts} = options
    return {
      region: region ?? options.region,
      ...(profile ? {profile} : {}),
      ...(endpoint ? {endpoint} : {}),
      retryMode: retry.mode,
      maxAttempts: maxAttempts ?? retry.attempts,
      // The options of the SDK's NodeHttpHandler. Without throwOnRequestTimeout the SDK only logs
      // a warning when requestTimeout passes and goes on waiting.
      requestHandler: {connectionTimeout: this.deadlines.connectMs, requestTimeout: this.deadlines.requestMs, throwOnRequestTimeout: true},
      customUserAgent: 'sluice',
    }
  }

  route53(): Promise<Route53Client> {
    // Route 53 is global; its API lives in us-east-1 whatever region the rest of the run uses.
    this.route53Client ??= this.settled(false).then(async (o) => new (await import('@aws-sdk/client-route-53')).Route53Client(this.config(o, 'us-east-1')))
    return this.route53Client
  }

  elbv2(): Promise<ElasticLoadBalancingV2Client> {
    this.elbv2Client ??= this.settled(true).then(
      async (o) => new (await import('@aws-sdk/client-elastic-load-balancing-v2')).ElasticLoadBalancingV2Client(this.config(o)),
    )
    return this.elbv2Client
  }

  cloudwatch(): Promise<CloudWatchClient> {
    this.cloudwatchClient ??= this.settled(true).then(async (o) => new (await import('@aws-sdk/client-cloudwatch')).CloudWatchClient(this.config(o)))
    return this.cloudwatchClient
  }

  dynamodb(): Promise<DynamoDBClient> {
    // The state store's calls are the run's own bookkeeping, small and on its critical path: with
    // adaptive retries one throttle made every later call queue behind the client's rate limiter
    // (a 25 s ramp took 67-85 s with 30% of calls throttled; with standard retries, 40-43 s). Ten
    // attempts, as the SDKs before v3 gave DynamoDB, within the call's 30 s deadline all the same.
    this.dynamodbClient ??= this.settled(true).then(
      async (o) => new (await import('@aws-sdk/client-dynamodb')).DynamoDBClient(this.config(o, undefined, {mode: 'standard', attempts: 10})),
    )
    return this.dynamodbClient
  }

  s3(): Promise<S3Client> {
    // The state store's calls, as DynamoDB's: standard retries, ten attempts. An endpoint of one's
    // own (moto, MinIO, a VPC endpoint by address) answers for buckets in the path, not as hosts.
    this.s3Client ??= this.settled(true).then(
      async (o) =>
        new (await import('@aws-sdk/client-s3')).S3Client({
          ...this.config(o, undefined, {mode: 'standard', attempts: 10}),
          forcePathStyle: Boolean(o.endpoint ?? process.env.AWS_ENDPOINT_URL_S3 ?? process.env.AWS_ENDPOINT_URL),
        }),
    )
    return this.s3Client
  }

  sts(): Promise<STSClient> {
    // Any region answers for the caller's identity; with none configured (a runbook on Route 53
    // alone), us-east-1, where STS's global endpoint is.
    this.stsClient ??= this.settled(false).then(async (o) => new (await import('@aws-sdk/client-sts')).STSClient(this.config(o, o.region ?? 'us-east-1')))
    return this.stsClient
  }

  ec2(): Promise<EC2Client> {
    this.ec2Client ??= this.settled(true).then(async (o) => new (await import('@aws-sdk/client-ec2')).EC2Client(this.config(o)))
    return this.ec2Client
  }

  ssm(): Promise<SSMClient> {
    this.ssmClient ??= this.settled(true).then(async (o) => new (await import('@aws-sdk/client-ssm')).SSMClient(this.config(o)))
    return this.ssmClient
  }

  ecs(): Promise<ECSClient> {
    this.ecsClient ??= this.settled(true).then(async (o) => new (await import('@aws-sdk/client-ecs')).ECSClient(this.config(o)))
    return this.ecsClient
  }

  destroy(): void {
    for (const client of [
      this.route53Client,
      this.elbv2Client,
      this.cloudwatchClient,
      this.dynamodbClient,
      this.s3Client,
      this.stsClient,
      this.ec2Client,
      this.ssmClient,
      this.ecsClient,
    ])
      void client?.then(
        (c) => c.destroy(),
        () => undefined,
      )
  }
}
