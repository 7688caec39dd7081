import type {ResourceRecordSet} from '@aws-sdk/client-route-53'
import type {Clock, WeightsPort, WeightMap} from '../ports/control-plane.js'
import {FailedError} from '../errors.js'
import {awsCall} from './errors.js'
import type {Route53Calls} from './sdk.js'

/** Route 53 names are fully qualified and case-insensitive; the API answers with a trailing dot. */
function normalise(name: string): string {
  const lower = name.toLowerCase()
  return lower.endsWith('.') ? lower : `${lower}.`
}

/** How long to wait for a change to reach every Route 53 name server, and how often to ask. */
const syncTimeout = 300
const syncPoll = 5

/**
 * A weighted record in Route 53: reads the sets of one name and type (paging, de-duplicated on
 * set identifier), and applies a whole ramp step as one atomic change batch, then waits for INSYNC.
 */
export class Route53Dns implements WeightsPort {
  readonly label: string

  constructor(
    private readonly route53: Route53Calls,
    private readonly clock: Clock,
    private readonly zoneId: string,
    private readonly record: string,
    private readonly type: string,
  ) {
    this.label = `${zoneId} ${record} ${type}`
  }

  /** Every weighted set of the record, by set identifier. */
  async sets(signal?: AbortSignal): Promise<Map<string, ResourceRecordSet>> {
    const name = normalise(this.record)
    const found = new Map<string, ResourceRecordSet>()
    let next: {name?: string; type?: string; id?: string} = {name, type: this.type}
    for (let page = 0; page < 100; page++) {
      const out = await awsCall(
        'Route53',
        'ListResourceRecordSets',
        `hosted zone ${this.zoneId}`,
        (abortSignal) =>
          this.route53.listResourceRecordSets(
            {
              HostedZoneId: this.zoneId,
              StartRecordName: next.name,
              StartRecordType: next.type as never,
              StartRecordIdentifier: next.id,
            },
            abortSignal,
          ),
        signal,
      )
      let passed = false
      const before = found.size
      for (const set of out.ResourceRecordSets ?? []) {
        // Listing starts at our name and type and runs on in order; stop at the first other record.
        if (normalise(set.Name ?? '') !== name || set.Type !== this.type) {
          passed = true
          break
        }
        if (set.SetIdentifier !== undefined && set.Weight !== undefined && !found.has(set.SetIdentifier)) found.set(set.SetIdentifier, set)
      }
      // A page that adds no new set means the API is repeating itself (moto does, within one name).
      if (passed || !out.IsTruncated || found.size === before) break
      next = {name: out.NextRecordName, type: out.NextRecordType, id: out.NextRecordIdentifier}
    }
    return found
  }

  async ttl(signal?: AbortSignal): Promise<number> {
    const sets = await this.requireSets(signal)
    return Math.max(...[...sets.values()].map((s) => s.TTL ?? 0))
  }

  async readWeights(signal?: AbortSignal): Promise<WeightMap> {
    const sets = await this.requireSets(signal)
    return Object.fromEntries([...sets].map(([id, set]) => [id, set.Weight ?? 0]))
  }

  async applyWeights(weights: WeightMap, signal?: AbortSignal): Promise<void> {
    const sets = await this.requireSets(signal)
    // Route 53 (and moto even less) will not catch every mistake: check sluice's own input first.
    for (const [id, weight] of Object.entries(weights)) {
      if (!sets.has(id)) throw new FailedError(`${this.label} has no weighted set "${id}"; it has ${[...sets.keys()].join(', ')}`)
      if (!Number.isInteger(weight) || weight < 0 || weight > 255)
        throw new FailedError(`weight ${weight} for set "${id}" of ${this.label} is not a whole number from 0 to 255`)
    }
    const changes = Object.entries(weights)
      .filter(([id, weight]) => sets.get(id)!.Weight !== weight)
      .map(([id, weight]) => ({Action: 'UPSERT' as const, ResourceRecordSet: {...sets.get(id)!, Weight: weight}}))
    if (changes.length === 0) return
    const out = await awsCall(
      'Route53',
      'ChangeResourceRecordSets',
      this.label,
      (abortSignal) =>
        this.route53.changeResourceRecordSets(
          {
            HostedZoneId: this.zoneId,
            ChangeBatch: {
              Comment: `sluice: ${Object.entries(weights)
                .map(([id, w]) => `${id}=${w}`)
                .join(' ')}`,
              Changes: changes,
            },
          },
          abortSignal,
        ),
      signal,
    )
    const changeId = out.ChangeInfo?.Id
    let status = out.ChangeInfo?.Status
    const deadline = this.clock.now() + syncTimeout
    while (status !== 'INSYNC' && changeId) {
      if (this.clock.now() >= deadline)
        throw new Error(`${this.label}: change ${changeId} was not INSYNC after ${syncTimeout} s; it is applied but may not have reached every name server`)
      // Route 53 has taken the change: stopped now, it is applied and reaches the name servers
      // without us watching.
      await this.clock.sleep(syncPoll, signal)
      if (signal?.aborted) return
      let change
      try {
        change = await awsCall('Route53', 'GetChange', changeId, (abortSignal) => this.route53.getChange({Id: changeId}, abortSignal), signal)
      } catch (error) {
        if (signal?.aborted) return
        throw error
      }
      status = change.ChangeInfo?.Status
    }
  }

  private async requireSets(signal?: AbortSignal): Promise<Map<string, ResourceRecordSet>> {
    const sets = await this.sets(signal)
    if (sets.size === 0) throw new FailedError(`no weighted ${this.type} record ${this.record} in hosted zone ${this.zoneId}`)
    return sets
  }
}
