import type {AwsOptions} from '../aws/clients.js'
import type {FreezeRecord, Restriction, WeightMap} from '../ports/control-plane.js'
import type {Runbook} from '../runbook/runbook.js'
import {liveControlPlane} from './control-plane.js'
import type {StateStore} from '../ports/state-store.js'

export interface LiveStatus {
  dns: {record: string; ttl: number; weights: WeightMap} | null
  targetGroups: Array<{pool: string; label: string; counts: Record<string, number>; total: number}>
  restrictions: {listener: string; rules: Restriction[]} | null
  freeze: FreezeRecord | null
}

/** What is true now for the runbook's targets: weights, target health, sluice's rules, the freeze. */
export async function liveStatus(runbook: Runbook, aws: AwsOptions, store: StateStore): Promise<LiveStatus> {
  const {control, clients} = liveControlPlane(runbook, aws, {operator: 'status', freeze: store.freeze})
  try {
    const dns = control.dns ? {record: control.dns.label, ttl: await control.dns.ttl(), weights: await control.dns.readWeights()} : null
    const targetGroups = []
    for (const [pool, group] of control.targetGroups) {
      const targets = await group.targets()
      const counts: Record<string, number> = {}
      for (const t of targets) counts[t.health] = (counts[t.health] ?? 0) + 1
      targetGroups.push({pool, label: group.label, counts, total: targets.length})
    }
    const restrictions = control.rules ? {listener: control.rules.label, rules: await control.rules.list()} : null
    return {dns, targetGroups, restrictions, freeze: await control.freeze.get()}
  } finally {
    clients.destroy()
  }
}

export function renderStatus(s: LiveStatus): string {
  const lines: string[] = []
  if (s.dns) lines.push(`${s.dns.record} (TTL ${s.dns.ttl} s): ${Object.entries(s.dns.weights).map(([k, v]) => `${k}=${v}`).join(' ')}`)
  for (const g of s.targetGroups) lines.push(`${g.label}: ${Object.entries(g.counts).map(([h, n]) => `${n} ${h}`).join(', ') || 'no targets'} (${g.total} in all)`)
  if (s.restrictions)
    lines.push(`${s.restrictions.listener}: ${s.restrictions.rules.length === 0 ? 'no restrictions' : s.restrictions.rules.map((r) => `${r.type} (${[...r.paths, ...Object.keys(r.headers)].join(', ')}; Retry-After ${r.retryAfterSeconds} s)`).join('; ')}`)
  lines.push(s.freeze ? `freeze: frozen since ${s.freeze.since} by ${s.freeze.by}: ${s.freeze.reason}${s.freeze.expires ? ` (until ${s.freeze.expires})` : ''}` : 'freeze: none')
  return lines.join('\n')
}
