import {AwsClients, type AwsOptions} from '../aws/clients.js'
import {AlbPoolReadings} from '../aws/pool-readings.js'
import {HaproxyPoolReadings} from '../haproxy/pool-readings.js'
import {RuntimeApi} from '../haproxy/runtime.js'
import type {PoolReadings} from '../ports/pool-readings.js'
import {loadPoolMapping} from '../prometheus/mapping.js'
import {PrometheusPoolReadings} from '../prometheus/pool-readings.js'
import {authorizationFromEnv, PrometheusApi} from '../prometheus/query.js'
import {arnRegion} from './live.js'

/**
 * Where calibrate and assess read a live pool: an ALB target group and its CloudWatch metrics, a
 * HAProxy backend, or a Prometheus server through the queries a mapping file names.
 */
export type PoolSource =
  | {kind: 'alb'; targetGroup: string; loadBalancer: string}
  | {kind: 'haproxy'; socket: string; backend: string; config?: string}
  | {kind: 'prometheus'; url: string; mapping: string}

/**
 * The readings of a live pool, what the source calls the pool, and how to let go of what they
 * hold. A mapping file is read and checked here, before anything is asked of Prometheus: a
 * problem in it is bad input at its file:line:column.
 */
export function poolReadings(
  source: PoolSource,
  aws: AwsOptions,
  options: {onSample?: (elapsed: number, total: number) => void} = {},
): {readings: PoolReadings; pool: string; close: () => void} {
  if (source.kind === 'haproxy') {
    const readings = new HaproxyPoolReadings(new RuntimeApi(source.socket), source.backend, {
      ...(source.config === undefined ? {} : {config: source.config}),
      ...(options.onSample ? {onSample: options.onSample} : {}),
    })
    return {readings, pool: source.backend, close: () => undefined}
  }
  if (source.kind === 'prometheus') {
    const mapping = loadPoolMapping(source.mapping)
    const variable = mapping.data.authorizationEnv
    const authorization = authorizationFromEnv(variable, `${mapping.locate(['authorizationEnv'])}: authorizationEnv`, source.url)
    const readings = new PrometheusPoolReadings(new PrometheusApi(source.url, authorization), mapping)
    return {readings, pool: mapping.data.pool, close: () => undefined}
  }
  const clients = new AwsClients({...aws, runbookRegion: arnRegion(source.targetGroup)})
  return {
    readings: new AlbPoolReadings(clients, source),
    pool: /targetgroup\/([^/]+)\//.exec(source.targetGroup)?.[1] ?? source.targetGroup,
    close: () => clients.destroy(),
  }
}
