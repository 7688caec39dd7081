import type {LockRecord} from '../ports/state-store.js'
import {formatTable} from './table.js'

/**
 * `sluice locks`'s list in `width`: a table when it fits, else one block a lock. Nothing in it is
 * cut: the lock id is what --break-lock takes, and who holds a lock is who to call before
 * breaking it, so a narrow terminal gets more lines, not less of either. A damaged record says why.
 */
export function locksTable(locks: LockRecord[], width: number): string {
  const damaged = locks.some((l) => l.damaged)
  const header = ['lock id', 'resource', 'run', 'holder', 'since', "last heartbeat (holder's clock)", 'lease']
  const table = formatTable(
    damaged ? [...header, 'DAMAGED'] : header,
    locks.map((l) => {
      const row = [l.lockId, l.resource, l.runId, holder(l), l.since, l.heartbeat, `${l.leaseSeconds} s`]
      return damaged ? [...row, l.damaged ?? ''] : row
    }),
  )
  if (Math.max(...table.split('\n').map((line) => [...line].length)) <= width) return table
  return locks
    .map((l) =>
      [
        `lock ${l.lockId}  ${l.resource}`,
        `  run ${l.runId}`,
        `  held by ${holder(l)}`,
        `  since ${l.since}`,
        `  last heartbeat ${l.heartbeat} (holder's clock), lease ${l.leaseSeconds} s`,
        ...(l.damaged ? [`  DAMAGED: ${l.damaged}`] : []),
      ].join('\n'),
    )
    .join('\n\n')
}

const holder = (l: LockRecord): string => `${l.operator}@${l.host} pid ${l.pid}`
