import type {LockRecord} from '../ports/state-store.js'
import {formatTable} from '../report/table.js'

/**
 * `sluice locks`'s list, fitted to `width`: the lock id (what --break-lock takes) and the run id
 * whole, and the times whole; the resource and the holder are cut first when the terminal is
 * narrow (--json has them whole). A damaged record says why in a column of its own.
 */
export function locksTable(locks: LockRecord[], width: number): string {
  const damaged = locks.some((l) => l.damaged)
  const header = ['lock id', 'resource', 'run', 'holder', 'since', "last heartbeat (holder's clock)", 'lease']
  return formatTable(
    damaged ? [...header, 'DAMAGED'] : header,
    locks.map((l) => {
      const row = [l.lockId, l.resource, l.runId, `${l.operator}@${l.host} pid ${l.pid}`, l.since, l.heartbeat, `${l.leaseSeconds} s`]
      return damaged ? [...row, l.damaged ?? ''] : row
    }),
    {width, free: damaged ? [1, 3, 7] : [1, 3]},
  )
}
