import type {ServerPool} from '../pool.js'

/** Simulated targets are named after their pool: `mailbox-07`. */
export function targetId(pool: string, i: number, size: number): string {
  return `${pool}-${String(i).padStart(String(size - 1).length, '0')}`
}

export function indexOf(pool: ServerPool, id: string): number {
  const i = Number(id.slice(pool.config.name.length + 1))
  if (!id.startsWith(`${pool.config.name}-`) || !Number.isInteger(i) || i < 0 || i >= pool.size) throw new Error(`no target ${id} in ${pool.config.name}`)
  return i
}
