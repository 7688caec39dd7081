import type {GetMetricDataCommandInput, GetMetricDataCommandOutput} from '@aws-sdk/client-cloudwatch'
import type {
  CreateTableCommandInput,
  CreateTableCommandOutput,
  DeleteItemCommandInput,
  DeleteItemCommandOutput,
  DescribeTableCommandInput,
  DescribeTableCommandOutput,
  GetItemCommandInput,
  GetItemCommandOutput,
  PutItemCommandInput,
  PutItemCommandOutput,
  QueryCommandInput,
  QueryCommandOutput,
  ScanCommandInput,
  ScanCommandOutput,
  TransactWriteItemsCommandInput,
  TransactWriteItemsCommandOutput,
} from '@aws-sdk/client-dynamodb'
import type {
  DescribeInstancesCommandInput,
  DescribeInstancesCommandOutput,
  DescribeInstanceStatusCommandInput,
  DescribeInstanceStatusCommandOutput,
  RebootInstancesCommandInput,
  RebootInstancesCommandOutput,
} from '@aws-sdk/client-ec2'
import type {
  DescribeServicesCommandInput,
  DescribeServicesCommandOutput,
  DescribeTasksCommandInput,
  DescribeTasksCommandOutput,
  ListTasksCommandInput,
  ListTasksCommandOutput,
  StopTaskCommandInput,
  StopTaskCommandOutput,
} from '@aws-sdk/client-ecs'
import type {
  CreateRuleCommandInput,
  CreateRuleCommandOutput,
  DeleteRuleCommandInput,
  DeleteRuleCommandOutput,
  DeregisterTargetsCommandInput,
  DeregisterTargetsCommandOutput,
  DescribeListenersCommandInput,
  DescribeListenersCommandOutput,
  DescribeRulesCommandInput,
  DescribeRulesCommandOutput,
  DescribeTagsCommandInput,
  DescribeTagsCommandOutput,
  DescribeTargetGroupAttributesCommandInput,
  DescribeTargetGroupAttributesCommandOutput,
  DescribeTargetGroupsCommandInput,
  DescribeTargetGroupsCommandOutput,
  DescribeTargetHealthCommandInput,
  DescribeTargetHealthCommandOutput,
  ModifyListenerCommandInput,
  ModifyListenerCommandOutput,
  ModifyRuleCommandInput,
  ModifyRuleCommandOutput,
  ModifyTargetGroupAttributesCommandInput,
  ModifyTargetGroupAttributesCommandOutput,
  RegisterTargetsCommandInput,
  RegisterTargetsCommandOutput,
} from '@aws-sdk/client-elastic-load-balancing-v2'
import type {
  ChangeResourceRecordSetsCommandInput,
  ChangeResourceRecordSetsCommandOutput,
  GetChangeCommandInput,
  GetChangeCommandOutput,
  ListResourceRecordSetsCommandInput,
  ListResourceRecordSetsCommandOutput,
} from '@aws-sdk/client-route-53'
import type {
  DeleteObjectCommandInput,
  DeleteObjectCommandOutput,
  GetObjectCommandInput,
  GetObjectCommandOutput,
  ListObjectsV2CommandInput,
  ListObjectsV2CommandOutput,
  PutObjectCommandInput,
  PutObjectCommandOutput,
} from '@aws-sdk/client-s3'
import type {
  CancelCommandCommandInput,
  CancelCommandCommandOutput,
  GetCommandInvocationCommandInput,
  GetCommandInvocationCommandOutput,
  ListCommandsCommandInput,
  ListCommandsCommandOutput,
  SendCommandCommandInput,
  SendCommandCommandOutput,
} from '@aws-sdk/client-ssm'
import type {GetCallerIdentityCommandInput, GetCallerIdentityCommandOutput} from '@aws-sdk/client-sts'
import type {AwsClients} from './clients.js'

/**
 * The AWS calls sluice makes, one narrow interface per service listing only those calls (as AWS
 * CDK's toolkit does), so each adapter takes the calls it makes and a test hands it a fake of
 * them. sdkCalls below is the one place they meet the SDK. Only types are imported here: the SDK
 * loads on a run's first call, never for --help or a rehearsal.
 */

/**
 * One call: its input, and the signal that aborts it (awsCall's: the call's deadline, or the run's
 * interrupt). The answer's $metadata (attempts, retry delay) is there when the SDK gave it.
 */
export type Call<I, O extends {$metadata: unknown}> = (input: I, abortSignal?: AbortSignal) => Promise<Omit<O, '$metadata'> & Partial<Pick<O, '$metadata'>>>

export interface Route53Calls {
  listResourceRecordSets: Call<ListResourceRecordSetsCommandInput, ListResourceRecordSetsCommandOutput>
  changeResourceRecordSets: Call<ChangeResourceRecordSetsCommandInput, ChangeResourceRecordSetsCommandOutput>
  getChange: Call<GetChangeCommandInput, GetChangeCommandOutput>
}

export interface Elbv2Calls {
  describeTargetGroups: Call<DescribeTargetGroupsCommandInput, DescribeTargetGroupsCommandOutput>
  describeTargetHealth: Call<DescribeTargetHealthCommandInput, DescribeTargetHealthCommandOutput>
  registerTargets: Call<RegisterTargetsCommandInput, RegisterTargetsCommandOutput>
  deregisterTargets: Call<DeregisterTargetsCommandInput, DeregisterTargetsCommandOutput>
  describeTargetGroupAttributes: Call<DescribeTargetGroupAttributesCommandInput, DescribeTargetGroupAttributesCommandOutput>
  modifyTargetGroupAttributes: Call<ModifyTargetGroupAttributesCommandInput, ModifyTargetGroupAttributesCommandOutput>
  describeRules: Call<DescribeRulesCommandInput, DescribeRulesCommandOutput>
  describeTags: Call<DescribeTagsCommandInput, DescribeTagsCommandOutput>
  createRule: Call<CreateRuleCommandInput, CreateRuleCommandOutput>
  deleteRule: Call<DeleteRuleCommandInput, DeleteRuleCommandOutput>
  modifyRule: Call<ModifyRuleCommandInput, ModifyRuleCommandOutput>
  describeListeners: Call<DescribeListenersCommandInput, DescribeListenersCommandOutput>
  modifyListener: Call<ModifyListenerCommandInput, ModifyListenerCommandOutput>
}

export interface CloudWatchCalls {
  getMetricData: Call<GetMetricDataCommandInput, GetMetricDataCommandOutput>
}

export interface DynamoDbCalls {
  describeTable: Call<DescribeTableCommandInput, DescribeTableCommandOutput>
  createTable: Call<CreateTableCommandInput, CreateTableCommandOutput>
  putItem: Call<PutItemCommandInput, PutItemCommandOutput>
  getItem: Call<GetItemCommandInput, GetItemCommandOutput>
  deleteItem: Call<DeleteItemCommandInput, DeleteItemCommandOutput>
  query: Call<QueryCommandInput, QueryCommandOutput>
  scan: Call<ScanCommandInput, ScanCommandOutput>
  transactWriteItems: Call<TransactWriteItemsCommandInput, TransactWriteItemsCommandOutput>
}

/** An object's body is read whole (a state record is small): text, not a stream. */
export type S3GetObject = (
  input: GetObjectCommandInput,
  abortSignal?: AbortSignal,
) => Promise<
  Omit<GetObjectCommandOutput, '$metadata' | 'Body'> & {Body?: {transformToString(): Promise<string>}} & Partial<Pick<GetObjectCommandOutput, '$metadata'>>
>

export interface S3Calls {
  putObject: Call<PutObjectCommandInput, PutObjectCommandOutput>
  getObject: S3GetObject
  deleteObject: Call<DeleteObjectCommandInput, DeleteObjectCommandOutput>
  listObjectsV2: Call<ListObjectsV2CommandInput, ListObjectsV2CommandOutput>
}

export interface StsCalls {
  getCallerIdentity: Call<GetCallerIdentityCommandInput, GetCallerIdentityCommandOutput>
}

export interface Ec2Calls {
  describeInstances: Call<DescribeInstancesCommandInput, DescribeInstancesCommandOutput>
  rebootInstances: Call<RebootInstancesCommandInput, RebootInstancesCommandOutput>
  describeInstanceStatus: Call<DescribeInstanceStatusCommandInput, DescribeInstanceStatusCommandOutput>
}

export interface SsmCalls {
  sendCommand: Call<SendCommandCommandInput, SendCommandCommandOutput>
  getCommandInvocation: Call<GetCommandInvocationCommandInput, GetCommandInvocationCommandOutput>
  cancelCommand: Call<CancelCommandCommandInput, CancelCommandCommandOutput>
  listCommands: Call<ListCommandsCommandInput, ListCommandsCommandOutput>
}

export interface EcsCalls {
  describeServices: Call<DescribeServicesCommandInput, DescribeServicesCommandOutput>
  listTasks: Call<ListTasksCommandInput, ListTasksCommandOutput>
  describeTasks: Call<DescribeTasksCommandInput, DescribeTasksCommandOutput>
  stopTask: Call<StopTaskCommandInput, StopTaskCommandOutput>
}

/** Every call sluice makes, by service. */
export interface AwsCalls {
  route53: Route53Calls
  elbv2: Elbv2Calls
  cloudwatch: CloudWatchCalls
  dynamodb: DynamoDbCalls
  s3: S3Calls
  sts: StsCalls
  ec2: Ec2Calls
  ssm: SsmCalls
  ecs: EcsCalls
}

/**
 * The calls over the SDK's clients: each loads its service's module and client on first use (the
 * client with the run's settings, deadlines and retries: src/aws/clients.ts) and sends the command
 * of its name.
 */
export function sdkCalls(clients: AwsClients): AwsCalls {
  const route53 = async () => [await import('@aws-sdk/client-route-53'), await clients.route53()] as const
  const elbv2 = async () => [await import('@aws-sdk/client-elastic-load-balancing-v2'), await clients.elbv2()] as const
  const cloudwatch = async () => [await import('@aws-sdk/client-cloudwatch'), await clients.cloudwatch()] as const
  const dynamodb = async () => [await import('@aws-sdk/client-dynamodb'), await clients.dynamodb()] as const
  const s3 = async () => [await import('@aws-sdk/client-s3'), await clients.s3()] as const
  const sts = async () => [await import('@aws-sdk/client-sts'), await clients.sts()] as const
  const ec2 = async () => [await import('@aws-sdk/client-ec2'), await clients.ec2()] as const
  const ssm = async () => [await import('@aws-sdk/client-ssm'), await clients.ssm()] as const
  const ecs = async () => [await import('@aws-sdk/client-ecs'), await clients.ecs()] as const
  return {
    route53: {
      listResourceRecordSets: async (input, abortSignal) => {
        const [m, client] = await route53()
        return client.send(new m.ListResourceRecordSetsCommand(input), {abortSignal})
      },
      changeResourceRecordSets: async (input, abortSignal) => {
        const [m, client] = await route53()
        return client.send(new m.ChangeResourceRecordSetsCommand(input), {abortSignal})
      },
      getChange: async (input, abortSignal) => {
        const [m, client] = await route53()
        return client.send(new m.GetChangeCommand(input), {abortSignal})
      },
    },
    elbv2: {
      describeTargetGroups: async (input, abortSignal) => {
        const [m, client] = await elbv2()
        return client.send(new m.DescribeTargetGroupsCommand(input), {abortSignal})
      },
      describeTargetHealth: async (input, abortSignal) => {
        const [m, client] = await elbv2()
        return client.send(new m.DescribeTargetHealthCommand(input), {abortSignal})
      },
      registerTargets: async (input, abortSignal) => {
        const [m, client] = await elbv2()
        return client.send(new m.RegisterTargetsCommand(input), {abortSignal})
      },
      deregisterTargets: async (input, abortSignal) => {
        const [m, client] = await elbv2()
        return client.send(new m.DeregisterTargetsCommand(input), {abortSignal})
      },
      describeTargetGroupAttributes: async (input, abortSignal) => {
        const [m, client] = await elbv2()
        return client.send(new m.DescribeTargetGroupAttributesCommand(input), {abortSignal})
      },
      modifyTargetGroupAttributes: async (input, abortSignal) => {
        const [m, client] = await elbv2()
        return client.send(new m.ModifyTargetGroupAttributesCommand(input), {abortSignal})
      },
      describeRules: async (input, abortSignal) => {
        const [m, client] = await elbv2()
        return client.send(new m.DescribeRulesCommand(input), {abortSignal})
      },
      describeTags: async (input, abortSignal) => {
        const [m, client] = await elbv2()
        return client.send(new m.DescribeTagsCommand(input), {abortSignal})
      },
      createRule: async (input, abortSignal) => {
        const [m, client] = await elbv2()
        return client.send(new m.CreateRuleCommand(input), {abortSignal})
      },
      deleteRule: async (input, abortSignal) => {
        const [m, client] = await elbv2()
        return client.send(new m.DeleteRuleCommand(input), {abortSignal})
      },
      modifyRule: async (input, abortSignal) => {
        const [m, client] = await elbv2()
        return client.send(new m.ModifyRuleCommand(input), {abortSignal})
      },
      describeListeners: async (input, abortSignal) => {
        const [m, client] = await elbv2()
        return client.send(new m.DescribeListenersCommand(input), {abortSignal})
      },
      modifyListener: async (input, abortSignal) => {
        const [m, client] = await elbv2()
        return client.send(new m.ModifyListenerCommand(input), {abortSignal})
      },
    },
    cloudwatch: {
      getMetricData: async (input, abortSignal) => {
        const [m, client] = await cloudwatch()
        return client.send(new m.GetMetricDataCommand(input), {abortSignal})
      },
    },
    dynamodb: {
      describeTable: async (input, abortSignal) => {
        const [m, client] = await dynamodb()
        return client.send(new m.DescribeTableCommand(input), {abortSignal})
      },
      createTable: async (input, abortSignal) => {
        const [m, client] = await dynamodb()
        return client.send(new m.CreateTableCommand(input), {abortSignal})
      },
      putItem: async (input, abortSignal) => {
        const [m, client] = await dynamodb()
        return client.send(new m.PutItemCommand(input), {abortSignal})
      },
      getItem: async (input, abortSignal) => {
        const [m, client] = await dynamodb()
        return client.send(new m.GetItemCommand(input), {abortSignal})
      },
      deleteItem: async (input, abortSignal) => {
        const [m, client] = await dynamodb()
        return client.send(new m.DeleteItemCommand(input), {abortSignal})
      },
      query: async (input, abortSignal) => {
        const [m, client] = await dynamodb()
        return client.send(new m.QueryCommand(input), {abortSignal})
      },
      scan: async (input, abortSignal) => {
        const [m, client] = await dynamodb()
        return client.send(new m.ScanCommand(input), {abortSignal})
      },
      transactWriteItems: async (input, abortSignal) => {
        const [m, client] = await dynamodb()
        return client.send(new m.TransactWriteItemsCommand(input), {abortSignal})
      },
    },
    s3: {
      putObject: async (input, abortSignal) => {
        const [m, client] = await s3()
        return client.send(new m.PutObjectCommand(input), {abortSignal})
      },
      getObject: async (input, abortSignal) => {
        const [m, client] = await s3()
        return client.send(new m.GetObjectCommand(input), {abortSignal})
      },
      deleteObject: async (input, abortSignal) => {
        const [m, client] = await s3()
        return client.send(new m.DeleteObjectCommand(input), {abortSignal})
      },
      listObjectsV2: async (input, abortSignal) => {
        const [m, client] = await s3()
        return client.send(new m.ListObjectsV2Command(input), {abortSignal})
      },
    },
    sts: {
      getCallerIdentity: async (input, abortSignal) => {
        const [m, client] = await sts()
        return client.send(new m.GetCallerIdentityCommand(input), {abortSignal})
      },
    },
    ec2: {
      describeInstances: async (input, abortSignal) => {
        const [m, client] = await ec2()
        return client.send(new m.DescribeInstancesCommand(input), {abortSignal})
      },
      rebootInstances: async (input, abortSignal) => {
        const [m, client] = await ec2()
        return client.send(new m.RebootInstancesCommand(input), {abortSignal})
      },
      describeInstanceStatus: async (input, abortSignal) => {
        const [m, client] = await ec2()
        return client.send(new m.DescribeInstanceStatusCommand(input), {abortSignal})
      },
    },
    ssm: {
      sendCommand: async (input, abortSignal) => {
        const [m, client] = await ssm()
        return client.send(new m.SendCommandCommand(input), {abortSignal})
      },
      getCommandInvocation: async (input, abortSignal) => {
        const [m, client] = await ssm()
        return client.send(new m.GetCommandInvocationCommand(input), {abortSignal})
      },
      cancelCommand: async (input, abortSignal) => {
        const [m, client] = await ssm()
        return client.send(new m.CancelCommandCommand(input), {abortSignal})
      },
      listCommands: async (input, abortSignal) => {
        const [m, client] = await ssm()
        return client.send(new m.ListCommandsCommand(input), {abortSignal})
      },
    },
    ecs: {
      describeServices: async (input, abortSignal) => {
        const [m, client] = await ecs()
        return client.send(new m.DescribeServicesCommand(input), {abortSignal})
      },
      listTasks: async (input, abortSignal) => {
        const [m, client] = await ecs()
        return client.send(new m.ListTasksCommand(input), {abortSignal})
      },
      describeTasks: async (input, abortSignal) => {
        const [m, client] = await ecs()
        return client.send(new m.DescribeTasksCommand(input), {abortSignal})
      },
      stopTask: async (input, abortSignal) => {
        const [m, client] = await ecs()
        return client.send(new m.StopTaskCommand(input), {abortSignal})
      },
    },
  }
}
