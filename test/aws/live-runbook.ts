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

/** Waits a run sits through when all goes well: bakes and wait steps. */
const waitKeys = new Set(['bake', 'for'])
/** How often a gate measures, and over what: the verdicts still come `successes` in a row. */
const cadenceKeys = new Set(['interval', 'window'])
/** Limits that end a step only when something goes wrong. */
const timeoutKeys = new Set(['timeout', 'healthyTimeout', 'drainTimeout'])

function seconds(value: unknown): number {
  if (typeof value === 'number') return value
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)$/.exec(String(value))
  if (!m) throw new Error(`not a duration: ${String(value)}`)
  return Number(m[1]) * {ms: 0.001, s: 1, m: 60, h: 3600}[m[2] as 'ms' | 's' | 'm' | 'h']
}

/**
 * Shrinks the waits in a runbook so a live run against moto takes seconds, not minutes: bakes and
 * waits to a second (the copy's TTL), gate intervals and windows to a second (the least a gate
 * may measure over), timeouts to a
 * sixtieth (at least a second). The steps, their order, batches, schedules, thresholds and success
 * counts stay as shipped. A gate gives up a bake after `successes` more intervals, so a verdict
 * may take up to bake / successes seconds longer than its interval on a loaded machine.
 */
function compress(node: unknown): unknown {
  if (Array.isArray(node)) return node.map((n) => compress(n))
  if (node && typeof node === 'object') {
    // A gate that leaves its interval to the default (10 s) would measure less often than its
    // shortened window: give it the shortest interval too.
    const gate = 'metric' in node && !('interval' in node) ? {interval: minInterval} : {}
    return Object.fromEntries(
      Object.entries({...node, ...gate}).map(([k, v]) => {
        if (typeof v !== 'number' && typeof v !== 'string') return [k, compress(v)]
        if (waitKeys.has(k)) return [k, Math.min(seconds(v), liveTtl)]
        if (cadenceKeys.has(k)) return [k, Math.min(seconds(v), minInterval)]
        if (timeoutKeys.has(k)) return [k, Math.max(1, Math.round(seconds(v) / 60))]
        return [k, v]
      }),
    )
  }
  return node
}

/** The seeded record's TTL in a live copy, in seconds. */
const liveTtl = 1

/** The shortest gate interval sluice accepts (CloudWatch's finest period). */
const minInterval = 1

/**
 * A shipped runbook pointed at resources seeded in moto: its steps as shipped, its targets
 * replaced, its hooks replaced by a recording script, and its waits compressed.
 */
export function liveCopy(file: string, targets: LiveTargets, dir: string, hook: string): string {
  const doc = parse(readFileSync(file, 'utf8')) as Record<string, any>
  const sets = doc.targets.dns?.sets ?? {mailbox: 'mailbox', maintenance: 'maintenance'}
  const pool = Object.keys(doc.targets.targetGroups ?? {mailbox: ''})[0]
  doc.targets = {
    ...(doc.targets.dns ? {dns: {zone: targets.zoneId, record: targets.record, type: 'A', ttl: liveTtl, sets}} : {}),
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
  writeFileSync(out, stringify(compress(doc)))
  return out
}
