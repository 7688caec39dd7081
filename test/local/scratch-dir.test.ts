import {spawnSync} from 'node:child_process'
import {existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync, mkdirSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, beforeEach, describe, expect, it} from 'vitest'
import {scratchDir, sweepScratch} from '../../src/platform/scratch-dir.js'
import {thisPlace} from '../../src/platform/process-place.js'

let base: string
beforeEach(() => {
  base = mkdtempSync(join(tmpdir(), 'scratch-test-'))
})
afterEach(() => rmSync(base, {recursive: true, force: true}))

/** A pid that ran and has exited (and been reaped). */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], {encoding: 'utf8'})
  return Number(child.stdout.trim())
}

function leftBy(name: string, owner: unknown): string {
  const dir = join(base, name)
  mkdirSync(dir)
  writeFileSync(join(dir, '.owner.json'), JSON.stringify(owner))
  writeFileSync(join(dir, 'admin.sock'), '')
  return dir
}

describe('scratch folders', () => {
  it('are 0700, name their owner, and hold files only the owner reads', () => {
    const dir = scratchDir('fleet', base)
    expect(statSync(dir).mode & 0o777).toBe(0o700)
    expect(readdirSync(dir)).toEqual(['.owner.json'])
    expect(statSync(join(dir, '.owner.json')).mode & 0o777).toBe(0o600)
  })

  it('a new one sweeps the folders whose owner has exited, and only those', () => {
    const dead = leftBy('sluice-haproxy-dead01', {pid: deadPid(), place: thisPlace})
    const live = leftBy('sluice-fleet-live01', {pid: process.pid, place: thisPlace})
    const elsewhere = leftBy('sluice-load-else01', {pid: deadPid(), place: 'another-boot/pid:[1]'})
    const making = join(base, 'sluice-fleet-making')
    mkdirSync(making)
    const notOurs = leftBy('other-tool-dead01', {pid: deadPid(), place: thisPlace})
    const made = scratchDir('haproxy', base)
    expect(existsSync(dead)).toBe(false)
    for (const kept of [live, elsewhere, making, notOurs, made]) expect(existsSync(kept)).toBe(true)
    expect(sweepScratch(base)).toEqual([])
  })

  it("a pid reused by a later process does not keep a dead owner's folder", () => {
    // This process's pid with another start time: the process that made it has gone.
    const reused = leftBy('sluice-fleet-reused', {pid: process.pid, started: '1', place: thisPlace})
    expect(sweepScratch(base)).toEqual([reused])
  })
})
