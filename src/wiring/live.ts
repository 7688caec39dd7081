import {actionOf} from '../actions/registry.js'
import {noRegion, resolveAws, type AwsOptions} from '../aws/clients.js'
import type {CallerIdentity} from '../ports/backend.js'
import {PrometheusMetrics} from '../prometheus/metrics.js'
import {authorizationFromEnv} from '../prometheus/query.js'
import type {ControlPlane, FreezePort} from '../ports/control-plane.js'
import {InputError} from '../errors.js'
import type {Runbook} from '../loader/runbook.js'
import {WallClock} from '../local/wall-clock.js'
import {CommandHooks} from '../local/command-hooks.js'
import {Restarts} from './restarts.js'
import {scenarioAssessor} from './assessor.js'
import {familyOf} from './families.js'

export interface LiveControl {
  control: ControlPlane
  /** What the control plane's ports hold (AWS clients), let go of once the run is done with them. */
  clients: {destroy(): void}
}

/** Where a path of the runbook is, for a family's errors. */
const locator = (runbook: Runbook) => (path: ReadonlyArray<PropertyKey>) => runbook.locate(path)

/**
 * A live run's AWS settings, checked before its first call (and its journal): a profile that
 * does not exist, ARNs in two regions, or no region at all for the regional calls it makes are
 * refused as bad input; so is a Prometheus header that cannot be sent. With no region configured,
 * the runbook's ARNs give it. Every run has these settings, whatever its family: its state store may be DynamoDB.
 */
export async function liveAws(runbook: Runbook, aws: AwsOptions): Promise<AwsOptions> {
  // The Prometheus header too: one that cannot be sent is bad input before a journal or a lock.
  prometheusAuthorization(runbook)
  const needs = familyOf(runbook.targets).awsNeeds?.(runbook.targets, locator(runbook))
  const resolved = await resolveAws({...aws, runbookRegion: needs?.region})
  if (needs?.regional && !resolved.region) throw noRegion()
  return resolved
}

/** The Authorization header a Prometheus metrics source sends, from the variable the runbook names, checked (src/prometheus/query.ts). */
function prometheusAuthorization(runbook: Runbook): string | undefined {
  const m = runbook.targets.metrics
  if (m?.source !== 'prometheus' || m.url === undefined) return undefined
  return authorizationFromEnv(m.authorizationEnv, `${runbook.locate(['targets', 'metrics', 'authorizationEnv'])}: targets.metrics.authorizationEnv`, m.url)
}

/**
 * The account and principal a live run acts as (on AWS, STS GetCallerIdentity), for its
 * confirmation, its plan and its journal; null for a runbook whose targets reach nothing that has
 * accounts (one that drives HAProxy, or only freezes), which makes no such call. A failure (no
 * credentials, invalid ones, no answer) is the run's first failure, before it reads or changes anything.
 */
export async function liveIdentity(runbook: Runbook, aws: AwsOptions, signal?: AbortSignal): Promise<CallerIdentity | null> {
  const family = familyOf(runbook.targets)
  return (await family.identity?.(runbook.targets, aws, {locate: locator(runbook), ...(signal ? {signal} : {})})) ?? null
}

/**
 * The control plane of a live run: the ports the runbook's family gives for its targets (the
 * family table, src/wiring/families.ts), gate metrics from Prometheus when the runbook reads them
 * there, hooks run as local commands, and the state store's freeze.
 */
export function liveControlPlane(runbook: Runbook, aws: AwsOptions, options: {operator: string; freeze: FreezePort; runId?: string}): LiveControl {
  const clock = new WallClock()
  const {targets} = runbook
  const ports = familyOf(targets).controlPlane(targets, aws, {clock, locate: locator(runbook)})
  const m = targets.metrics
  let metrics = ports.metrics
  if (m?.source === 'prometheus') {
    if (!m.url || !m.queries) throw new InputError(`${runbook.locate(['targets', 'metrics'])}: targets.metrics: a Prometheus source needs url and queries`)
    metrics = new PrometheusMetrics(m.url, m.queries, clock, prometheusAuthorization(runbook))
  }
  return {
    clients: {destroy: () => ports.close()},
    control: {
      clock,
      weights: ports.weights,
      poolWeights: ports.poolWeights,
      pools: ports.pools,
      restrictions: ports.restrictions,
      metrics,
      assessor: scenarioAssessor(runbook),
      freeze: options.freeze,
      hooks: new Restarts(new CommandHooks(ports.addresses), ports.restarts),
      operator: options.operator,
      runId: options.runId,
      byHand: runbook.source.kind === 'flags',
    },
  }
}

/** The resources a runbook changes, as lock names: two runs on any of the same ones may not overlap. */
export function lockedResources(runbook: Runbook): string[] {
  return [...new Set(runbook.steps.flatMap((step) => actionOf(step).locks(step, runbook.targets)))]
}
