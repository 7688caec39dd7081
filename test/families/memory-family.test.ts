import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {planRunbook} from '../../src/engine/plan.js'
import type {Runbook} from '../../src/loader/runbook.js'
import {runLive} from '../../src/live/live-run.js'
import {planLive} from '../../src/live/preflight.js'
import {backendFamilies, backendOf} from '../../src/runbook/targets.js'
import {addFamily, familyNames} from '../../src/wiring/families.js'
import {lockedResources} from '../../src/wiring/live.js'
import {rehearse} from '../../src/wiring/rehearsal.js'
import {openStore} from '../../src/wiring/state.js'
import {RecordingIO} from '../helpers/fakes.js'
import {scenarioFrom} from '../helpers/sim.js'
import {memoryFamily, memoryRunbook, worlds} from './memory/family.js'

// A fourth backend family, added from this test: its folder (./memory) and the family table
// (addFamily) are all it touches. The loader, the actions' plans and locks, the live run with its
// journal and locks, and the rehearsal take it as they take AWS and HAProxy.

const text = (name: string) => `name: memory-return
targets:
  memory:
    name: ${name}
    pools: {blue: 6, green: 6}
steps:
  - {action: freeze, reason: moving to green}
  - {action: restrict, type: search, paths: [/search/], retryAfter: 30}
  - {action: ramp, set: green, schedule: [50, 100], bake: 0}
  - {action: cycle, pool: blue, batch: 2, bake: 0}
  - {action: lift, type: search}
  - {action: unfreeze}
`

const scenario = `name: memory-lab
duration: 600
seed: 1
pools:
  - {name: blue, servers: 6, capacity: 100, restartSeconds: 10, queueSeconds: 2}
  - {name: green, servers: 6, capacity: 100, restartSeconds: 10, queueSeconds: 2}
demand:
  rps: 300
  types: {web: 0.8, search: 0.2}
dns:
  ttl: 0
  weights: {blue: 100, green: 0}
clients: {attempts: 2, timeout: 4, backoffBase: 1, backoffMax: 10}
healthCheck: {kind: haproxy, inter: 2, fall: 3, rise: 2}
setups:
  checks-only: {}
`

const inputs = (io = new RecordingIO(true)) => ({io, signal: new AbortController().signal, operator: 'tester'})

describe('a fourth backend family, in memory, added from a test', () => {
  let remove: () => void
  beforeAll(() => {
    remove = addFamily(memoryFamily)
  })
  afterAll(() => remove())

  it('is listed in both halves of the family table, asked first', () => {
    expect(familyNames()).toEqual(['memory', 'haproxy', 'aws'])
    expect(backendFamilies()).toEqual(['memory', 'haproxy', 'aws'])
  })

  it('a runbook on it loads, plans in its names, and locks its resources', () => {
    const runbook = memoryRunbook('memory.yaml', text('plan'))
    expect(backendOf(runbook.targets).family).toBe('memory')
    const plan = planRunbook(runbook).flatMap((step) => step.details)
    expect(plan).toContain('green 50% → 100% of memory plan split (the rest to blue)')
    expect(plan.join('\n')).toContain('on memory plan gate')
    expect(lockedResources(runbook)).toEqual(['memory:plan/gate', 'memory:plan/split', 'memory:plan/pool/blue'])
  })

  it('its face refuses what it cannot drive, at its place in the runbook', () => {
    const mixed = text('mixed').replace('targets:\n', 'targets:\n  listener: arn:aws:elasticloadbalancing:eu-west-1:1:listener/app/a/b/c\n')
    expect(() => memoryRunbook('memory.yaml', mixed)).toThrow(
      /memory\.yaml:3:\d+: targets\.listener: targets\.listener and targets\.memory: one runbook drives one control plane/,
    )
  })

  it('runs live, in process, on the ports its factory gives: journalled, locked and let go, every change made', async () => {
    const runbook = memoryRunbook('memory.yaml', text('live'))
    const state = join(mkdtempSync(join(tmpdir(), 'sluice-memory-family-')), 'state')
    const planned = await planLive(runbook, {}, await openStore(state, {}))
    expect(planned.identity).toBeNull()
    expect(planned.now).toEqual([
      'memory live split (TTL 0 s) now: blue=100 green=0',
      'target group blue now: 6 of 6 targets healthy',
      'target group green now: 6 of 6 targets healthy',
      'memory live gate now: no restrictions',
      'freeze now: none',
    ])
    expect(planned.on).toBe('memory live')
    const io = new RecordingIO(true)
    const report = await runLive(runbook, inputs(io), {aws: {}, state})
    expect(report.run.outcome, report.run.message).toBe('completed')
    expect(io.questions).toEqual(['Apply memory-return on memory live?'])
    const world = worlds.get('live')!
    expect(world.split.weights).toEqual({blue: 0, green: 100})
    expect(world.gate.ever).toEqual(['search'])
    expect(world.gate.rules).toEqual([])
    expect(world.pools.get('blue')!.deregistrations).toEqual([
      ['blue-0', 'blue-1'],
      ['blue-2', 'blue-3'],
      ['blue-4', 'blue-5'],
    ])
    const store = await openStore(state, {})
    const journal = await store.read(report.runId)
    expect(journal.entries[0]).toMatchObject({type: 'run-start', resources: ['memory:live/gate', 'memory:live/split', 'memory:live/pool/blue']})
    expect(journal.entries[0]).not.toHaveProperty('identity')
    expect(journal.entries.at(-1)).toMatchObject({type: 'run-end', outcome: 'completed'})
    expect(await store.locks()).toEqual([])
  })

  it('is rehearsed by the simulator from its face alone', async () => {
    const runbook = memoryRunbook('memory.yaml', text('rehearsed'))
    const report = await rehearse(runbook, inputs(), {scenario: scenarioFrom(scenario), pace: null})
    expect(report.run.outcome, report.run.message).toBe('completed')
    expect(report.rehearsal.weights.at(-1)?.weights).toEqual({blue: 0, green: 100})
    expect(report.rehearsal.restrictedAtEnd).toEqual([])
  })
})

describe('the family table', () => {
  it('lists each shipped family in both halves, in the same order', () => {
    expect(familyNames()).toEqual(['haproxy', 'aws'])
    expect(backendFamilies()).toEqual(familyNames())
  })

  it('once a family is taken out, its targets are no longer its: targets naming no family are AWS’s', () => {
    const remove = addFamily(memoryFamily)
    const targets = {memory: {name: 'gone', pools: {blue: 1}}} as unknown as Runbook['targets']
    expect(backendOf(targets).family).toBe('memory')
    remove()
    expect(familyNames()).toEqual(['haproxy', 'aws'])
    expect(backendOf(targets).family).toBe('aws')
  })

  it('refuses a second family of a name already listed', () => {
    expect(() => addFamily({...memoryFamily, face: {...memoryFamily.face, family: 'aws'}})).toThrow('a backend family named aws is already listed')
    expect(familyNames()).toEqual(['haproxy', 'aws'])
  })
})
