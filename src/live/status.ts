import type {AwsOptions} from '../aws/clients.js'
import type {FreezeRecord, Restriction, WeightMap} from '../ports/control-plane.js'
import type {Runbook} from '../loader/runbook.js'
import type {Drift} from '../actions/action.js'
import type {ControlPlane} from '../ports/control-plane.js'
import {mutations, runStart} from '../state/journal.js'
import {liveControlPlane} from '../wiring/live.js'
import {describeDrift, findDrift} from '../way-back/history.js'
import {runbookOf} from './recovery.js'
import {shareNote} from '../actions/restrict/restriction.js'
import type {StateStore} from '../ports/state-store.js'

export interface LiveStatus {
  dns: {record: string; ttl: number; weights: WeightMap} | null
  targetGroups: Array<{pool: string; label: string; counts: Record<string, number>; total: number}>
  restrictions: {listener: string; rules: Restriction[]} | null
  freeze: FreezeRecord | null
  /** With a run: what it left that is no longer so (empty: none), as resume checks it. */
  drift?: {runId: string; found: Array<Omit<Drift, 'reapply'> & {reapply: string[]}>}
}

/** What is true now for the runbook's targets: weights, target health, sluice's rules, the freeze. */
export async function liveStatus(runbook: Runbook, aws: AwsOptions, store: StateStore): Promise<LiveStatus> {
  const {control, clients} = liveControlPlane(runbook, aws, {operator: 'status', freeze: store.freeze})
  try {
    return await statusOf(control)
  } finally {
    clients.destroy()
  }
}

/** A run's targets now, and its drift: what it left (by its journal) against what is there. */
export async function runStatusOf(store: StateStore, runId: string, aws: AwsOptions): Promise<LiveStatus> {
  const read = await store.read(runId)
  const runbook = runbookOf(runStart(read))
  const {control, clients} = liveControlPlane(runbook, aws, {operator: 'status', freeze: store.freeze, runId})
  try {
    const drift = await findDrift(mutations(read), control)
    return {...(await statusOf(control)), drift: {runId, found: drift.map((d) => ({...d, reapply: d.reapply.map((u) => u.describe)}))}}
  } finally {
    clients.destroy()
  }
}

async function statusOf(control: ControlPlane): Promise<LiveStatus> {
  const dns = control.weights ? {record: control.weights.label, ttl: await control.weights.ttl(), weights: await control.weights.readWeights()} : null
  const targetGroups = []
  for (const [pool, group] of control.pools) {
    const targets = await group.targets()
    const counts: Record<string, number> = {}
    for (const t of targets) counts[t.health] = (counts[t.health] ?? 0) + 1
    targetGroups.push({pool, label: group.label, counts, total: targets.length})
  }
  const restrictions = control.restrictions ? {listener: control.restrictions.label, rules: await control.restrictions.list()} : null
  return {dns, targetGroups, restrictions, freeze: await control.freeze.get()}
}

export function renderStatus(s: LiveStatus): string {
  const lines: string[] = []
  if (s.dns)
    lines.push(
      `${s.dns.record} (TTL ${s.dns.ttl} s): ${Object.entries(s.dns.weights)
        .map(([k, v]) => `${k}=${v}`)
        .join(' ')}`,
    )
  for (const g of s.targetGroups)
    lines.push(
      `${g.label}: ${
        Object.entries(g.counts)
          .map(([h, n]) => `${n} ${h}`)
          .join(', ') || 'no targets'
      } (${g.total} in all)`,
    )
  if (s.restrictions)
    lines.push(
      `${s.restrictions.listener}: ${s.restrictions.rules.length === 0 ? 'no restrictions' : s.restrictions.rules.map((r) => `${r.type} (${[...r.paths, ...Object.keys(r.headers)].join(', ')}; Retry-After ${r.retryAfterSeconds} s${shareNote(r) ? `; ${shareNote(r)}` : ''})`).join('; ')}`,
    )
  lines.push(
    s.freeze
      ? `freeze: frozen since ${s.freeze.since} by ${s.freeze.by}: ${s.freeze.reason}${s.freeze.expires ? ` (until ${s.freeze.expires})` : ''}`
      : 'freeze: none',
  )
  if (s.drift) {
    if (s.drift.found.length === 0) lines.push(`drift: none; everything run ${s.drift.runId} left is as its journal says`)
    for (const d of s.drift.found)
      lines.push(`drift: ${describeDrift({...d, reapply: []})} (\`sluice resume ${s.drift.runId} --reapply\` would ${d.reapply.join('; ')})`)
  }
  return lines.join('\n')
}
