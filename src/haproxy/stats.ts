import {ImpossibleReading} from '../ports/reading-bounds.js'
import type {RuntimeApi} from './runtime.js'
import {RuntimeError, oneLine} from './runtime.js'

/**
 * `show servers state <backend>` and `show stat <backend> 4 -1`, parsed by their header lines
 * (which name the columns), so a HAProxy that adds columns does not shift what sluice reads.
 */
export type Row = Record<string, string>

/** Rows of a table whose header starts with `#`; HAProxy's refusals are a single text line instead. */
function table(answer: string, separator: RegExp): Row[] | null {
  const lines = answer.split('\n').filter((l) => l.trim() !== '')
  const at = lines.findIndex((l) => l.startsWith('#'))
  if (at < 0) return null
  const names = lines[at].replace(/^#\s*/, '').split(separator)
  return lines.slice(at + 1).map((line) => {
    const cells = line.split(separator)
    return Object.fromEntries(names.map((n, i) => [n, cells[i] ?? '']))
  })
}

export async function serversState(api: RuntimeApi, backend: string, signal?: AbortSignal): Promise<Row[]> {
  const command = `show servers state ${backend}`
  const answer = await api.send(command, signal)
  const rows = table(answer, / +/)
  if (!rows) throw new RuntimeError(api.label, command, `was refused for backend ${backend}: ${oneLine(answer)}`)
  return rows
}

/** Per-server stats of one backend (type 4 = servers); the BACKEND row is left out. */
export async function serverStats(api: RuntimeApi, backend: string, signal?: AbortSignal): Promise<Row[]> {
  return (await stats(api, backend, 4, signal)).filter((r) => r.svname !== 'BACKEND')
}

/** The backend's own row of `show stat` (type 2): its totals, the requests HAProxy answered itself included. */
export async function backendStats(api: RuntimeApi, backend: string, signal?: AbortSignal): Promise<Row> {
  const rows = await stats(api, backend, 2, signal)
  const row = rows.find((r) => r.svname === 'BACKEND')
  if (!row) throw new RuntimeError(api.label, `show stat ${backend} 2 -1`, `has no BACKEND row for backend ${backend}`)
  return row
}

async function stats(api: RuntimeApi, backend: string, type: number, signal?: AbortSignal): Promise<Row[]> {
  const rows = await statRows(api, backend, type, signal)
  // `show stat <name>` finds the first proxy of that name, which is the frontend where a frontend
  // and a backend share one (a common setup), and HAProxy 2.6 then answers no rows at all. All
  // proxies of the type, filtered by name, always has them; asked only then, since it is every
  // backend's rows at once.
  const own = rows.filter((r) => r.pxname === backend)
  if (own.length > 0) return own
  return (await statRows(api, '-1', type, signal)).filter((r) => r.pxname === backend)
}

async function statRows(api: RuntimeApi, proxy: string, type: number, signal?: AbortSignal): Promise<Row[]> {
  const command = `show stat ${proxy} ${type} -1`
  const answer = await api.send(command, signal)
  const rows = table(answer, /,/)
  if (!rows) throw new RuntimeError(api.label, command, `was refused for backend ${proxy}: ${oneLine(answer)}`)
  return rows
}

/** Which cell of `show stat` a reading is, for its error: `show stat field stot of server s1`. */
export function statField(row: Row, column: string): string {
  return `show stat field ${column} of ${row.svname === 'BACKEND' ? 'the BACKEND row' : `server ${row.svname}`}`
}

/**
 * A counter or gauge cell of `show stat` as a number: HAProxy writes unsigned whole numbers, and
 * leaves a cell empty where it does not apply (a TCP backend's hrsp_*), which counts as 0.
 * Anything else (−357, 1e27, 1.5, text) is no reading HAProxy gives: an error naming the source,
 * the field and the value, never a rate. Past 2^53 a double cannot count one by one, and no
 * HAProxy counts that far (285 years at a million a second).
 */
export function statNumber(row: Row, column: string, source: string, most = Number.MAX_SAFE_INTEGER): number {
  const cell = (row[column] ?? '').trim()
  if (cell === '') return 0
  const value = /^\d+$/.test(cell) ? Number(cell) : null
  if (value === null || value > most)
    throw new ImpossibleReading(source, statField(row, column), cell, `a whole number, 0 to ${most === Number.MAX_SAFE_INTEGER ? '2^53' : most}`)
  return value
}
