import {lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {processRuns, thisPlace, thisStart} from './process-place.js'

/**
 * Private working folders in $TMPDIR (a drill child's config, HAProxy's config, maps and admin
 * socket). Each is 0700 and names its owner (pid, start ticks, place), because kill -9 runs no
 * cleanup: the next sluice to make one removes every folder whose owner no longer runs here.
 */

const prefix = 'sluice-'
const ownerFile = '.owner.json'

interface Owner {
  pid: number
  started?: string
  place?: string
}

/** A new 0700 folder `sluice-<name>-XXXXXX` in `base`, after sweeping the ones dead owners left. */
export function scratchDir(name: string, base = tmpdir()): string {
  sweepScratch(base)
  const dir = mkdtempSync(join(base, `${prefix}${name}-`))
  const owner: Owner = {pid: process.pid, started: thisStart, place: thisPlace}
  writeFileSync(join(dir, ownerFile), JSON.stringify(owner), {mode: 0o600})
  return dir
}

/** Writes a file only its owner can read (a config may name sockets and ports worth keeping private). */
export function writeScratchFile(file: string, text: string): void {
  writeFileSync(file, text, {mode: 0o600})
}

/**
 * Removes each sluice scratch folder in `base` that this user owns and whose owner process has
 * gone from this place; returns what it removed. A folder with no owner file yet is being made
 * (or predates owner files) and is left; so is one made in another container or boot, whose
 * pids mean nothing here.
 */
export function sweepScratch(base = tmpdir()): string[] {
  let names: string[]
  try {
    names = readdirSync(base)
  } catch {
    return []
  }
  const uid = process.getuid?.()
  const removed: string[] = []
  for (const name of names) {
    if (!name.startsWith(prefix)) continue
    const dir = join(base, name)
    try {
      const stat = lstatSync(dir)
      if (!stat.isDirectory() || (uid !== undefined && stat.uid !== uid)) continue
      const owner = JSON.parse(readFileSync(join(dir, ownerFile), 'utf8')) as Owner
      if (owner.place !== thisPlace || processRuns(owner.pid, owner.started)) continue
      rmSync(dir, {recursive: true, force: true})
      removed.push(dir)
    } catch {
      // Unreadable, half-made or gone meanwhile: not ours to judge.
    }
  }
  return removed
}
