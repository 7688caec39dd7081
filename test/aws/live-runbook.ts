import {readFileSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {parse, stringify} from 'yaml'

export interface LiveTargets {
  zoneId: string
  record: string
  targetGroupArn: string
  listenerArn: string
  loadBalancer: string
}

const durationKeys = new Set(['bake', 'window', 'interval', 'timeout', 'for', 'healthyTimeout', 'drainTimeout'])

function seconds(value: unknown): number {
  if (typeof value === 'number') return value
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(String(value))
  if (!m) throw new Error(`not a duration: ${String(value)}`)
  return Number(m[1]) * {ms: 0.001, s: 1, m: 60, h: 3600}[m[2] as 'ms' | 's' | 'm' | 'h']
}

/** Divides every wait in a runbook by `factor` (at least a second), so a live run against moto takes seconds, not minutes. */
function compress(node: unknown, factor: number): unknown {
  if (Array.isArray(node)) return node.map((n) => compress(n, factor))
  if (node && typeof node === 'object') {
    return Object.fromEntries(
      Object.entries(node).map(([k, v]) => [k, durationKeys.has(k) && (typeof v === 'number' || typeof v === 'string') ? Math.max(1, Math.round(seconds(v) / factor)) : compress(v, factor)]),
    )
  }
  return node
}

/**
 * A shipped runbook pointed at resources seeded in moto: its steps as shipped, its targets
 * replaced, its hooks replaced by a recording script, and its waits compressed.
 */
export function liveCopy(file: string, targets: LiveTargets, dir: string, hook: string, factor = 60): string {
  const doc = parse(readFileSync(file, 'utf8')) as Record<string, any>
  const sets = doc.targets.dns?.sets ?? {mailbox: 'mailbox', maintenance: 'maintenance'}
  const pool = Object.keys(doc.targets.targetGroups ?? {mailbox: ''})[0]
  doc.targets = {
    ...(doc.targets.dns ? {dns: {zone: targets.zoneId, record: targets.record, type: 'A', ttl: 1, sets}} : {}),
    targetGroups: {[pool]: targets.targetGroupArn},
    ...(doc.targets.listener ? {listener: targets.listenerArn} : {}),
    metrics: {source: 'cloudwatch', loadBalancer: targets.loadBalancer},
  }
  delete doc.rehearsal
  for (const step of doc.steps) {
    if (step.restart) step.restart = {command: [hook, 'restart', '{id}', '{ip}', '{port}']}
    if (step.remediate) step.remediate = {command: [hook, 'remediate', '{id}', '{ip}', '{port}']}
  }
  const out = join(dir, file.split('/').at(-1)!)
  writeFileSync(out, stringify(compress(doc, factor)))
  return out
}
