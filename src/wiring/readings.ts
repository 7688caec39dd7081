import type {AwsOptions} from '../aws/clients.js'
import {albPoolReadings} from '../aws/ports.js'
import {haproxyPoolReadings} from '../haproxy/ports.js'
import type {OpenedReadings} from '../ports/pool-readings.js'
import {loadPoolMapping} from '../prometheus/mapping.js'
import {PrometheusPoolReadings} from '../prometheus/pool-readings.js'
import {authorizationFromEnv, PrometheusApi} from '../prometheus/query.js'

/**
 * Where calibrate and assess read a live pool: an ALB target group and its CloudWatch metrics, a
 * HAProxy backend, or a Prometheus server through the queries a mapping file names.
 */
export type PoolSource =
  | {kind: 'alb'; targetGroup: string; loadBalancer: string}
  | {kind: 'haproxy'; socket: string; backend: string; config?: string}
  | {kind: 'prometheus'; url: string; mapping: string}

type ReadingsOptions = {onSample?: (elapsed: number, total: number) => void}

/**
 * A Prometheus server's readings of a pool. Its mapping file is read and checked here, before
 * anything is asked of Prometheus: a problem in it is bad input at its file:line:column.
 */
function prometheusPoolReadings(source: {url: string; mapping: string}): OpenedReadings {
  const mapping = loadPoolMapping(source.mapping)
  const variable = mapping.data.authorizationEnv
  const authorization = authorizationFromEnv(variable, `${mapping.locate(['authorizationEnv'])}: authorizationEnv`, source.url)
  return {readings: new PrometheusPoolReadings(new PrometheusApi(source.url, authorization), mapping), pool: mapping.data.pool, close: () => undefined}
}

/** Who opens each kind of source: the AWS and HAProxy families their own pools, Prometheus any pool it has queries for. */
const openers: {[K in PoolSource['kind']]: (source: Extract<PoolSource, {kind: K}>, aws: AwsOptions, options: ReadingsOptions) => OpenedReadings} = {
  alb: (source, aws) => albPoolReadings(source, aws),
  haproxy: (source, _aws, options) => haproxyPoolReadings(source, options),
  prometheus: (source) => prometheusPoolReadings(source),
}

/** The readings of a live pool, what the source calls the pool, and how to let go of what they hold. */
export function poolReadings(source: PoolSource, aws: AwsOptions, options: ReadingsOptions = {}): OpenedReadings {
  const open = openers[source.kind] as (source: PoolSource, aws: AwsOptions, options: ReadingsOptions) => OpenedReadings
  return open(source, aws, options)
}
