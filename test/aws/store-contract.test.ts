import {CreateBucketCommand, S3Client} from '@aws-sdk/client-s3'
import {beforeAll, inject} from 'vitest'
import {DynamoStore} from '../../src/aws/dynamo-store.js'
import {S3Store} from '../../src/aws/s3-store.js'
import {storeContract} from '../helpers/store-contract.js'
import {awsTestEnv, clientConfig} from './moto.js'
import {uniqueName} from './seed.js'

// The state store contract (test/helpers/store-contract.ts) on the two team stores, through the
// real SDK against moto: the same suite the local directory passes (test/state/).

const moto = inject('motoEndpoint')
const table = uniqueName('sluice-contract')
const bucket = uniqueName('sluice-contract')

beforeAll(async () => {
  // The stores' clients find moto and its test credentials as a run's would: in the environment.
  Object.assign(process.env, awsTestEnv(moto))
  const s3 = new S3Client({...clientConfig(moto), forcePathStyle: true})
  await s3.send(new CreateBucketCommand({Bucket: bucket}))
  s3.destroy()
})

storeContract('DynamoDB (moto)', async () => {
  const store = new DynamoStore(table, {})
  return {
    store,
    again: () => new DynamoStore(table, {}),
    // As the store writes a lock item, without its conditions.
    steal: async (record) => {
      await store.put({
        pk: {S: `lock#${record.resource}`},
        sk: {N: '0'},
        runId: {S: record.runId},
        lockId: {S: record.lockId},
        version: {S: record.version},
        fence: {N: String(record.fence)},
        holder: {S: JSON.stringify(record)},
      })
    },
  }
})

let prefixes = 0
storeContract('S3 with conditional writes (moto)', async () => {
  // A prefix of its own per test: the freeze is one object per store.
  const prefix = `team-${prefixes++}/state`
  const store = new S3Store(bucket, prefix, {})
  return {
    store,
    again: () => new S3Store(bucket, prefix, {}),
    steal: async (record) => {
      await store.put(`${prefix}/locks/${encodeURIComponent(record.resource)}.json`, JSON.stringify(record), null)
    },
  }
})
