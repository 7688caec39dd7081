import {AwsClients, type AwsOptions} from '../aws/clients.js'
import {AlbPoolReadings} from '../aws/pool-readings.js'
import type {PoolReadings} from '../ports/pool-readings.js'
import {arnRegion} from './live.js'

/** Where calibrate and assess read a live pool: an ALB target group and its CloudWatch metrics. */
export interface PoolSource {
  targetGroup: string
  loadBalancer: string
}

/** The readings of a live pool, and how to let go of what they hold. */
export function poolReadings(source: PoolSource, aws: AwsOptions): {readings: PoolReadings; close: () => void} {
  const clients = new AwsClients({...aws, runbookRegion: arnRegion(source.targetGroup)})
  return {readings: new AlbPoolReadings(clients, source), close: () => clients.destroy()}
}
