import {AwsClients, type AwsOptions} from '../aws/clients.js'
import {AlbPoolReadings} from '../aws/pool-readings.js'
import {HaproxyPoolReadings} from '../haproxy/pool-readings.js'
import {RuntimeApi} from '../haproxy/runtime.js'
import type {PoolReadings} from '../ports/pool-readings.js'
import {arnRegion} from './live.js'

/** Where calibrate and assess read a live pool: an ALB target group and its CloudWatch metrics, or a HAProxy backend. */
export type PoolSource = {kind: 'alb'; targetGroup: string; loadBalancer: string} | {kind: 'haproxy'; socket: string; backend: string; config?: string}

/** The readings of a live pool, and how to let go of what they hold. */
export function poolReadings(
  source: PoolSource,
  aws: AwsOptions,
  options: {onSample?: (elapsed: number, total: number) => void} = {},
): {readings: PoolReadings; close: () => void} {
  if (source.kind === 'haproxy') {
    const readings = new HaproxyPoolReadings(new RuntimeApi(source.socket), source.backend, {
      ...(source.config === undefined ? {} : {config: source.config}),
      ...(options.onSample ? {onSample: options.onSample} : {}),
    })
    return {readings, close: () => undefined}
  }
  const clients = new AwsClients({...aws, runbookRegion: arnRegion(source.targetGroup)})
  return {readings: new AlbPoolReadings(clients, source), close: () => clients.destroy()}
}
