import {readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {placeText} from '../../src/format.js'
import {parseRunbook} from '../../src/loader/load-runbook.js'
import type {RunEvent} from '../../src/ports/io.js'
import {runView} from '../../src/serve/run-view.js'
import {rehearse} from '../../src/wiring/rehearsal.js'
import {runStartFields} from '../helpers/journal-entries.js'

const fixture = new URL('../fixtures/runbooks/assess-before-return.yaml', import.meta.url).pathname

async function eventsOf(text: string): Promise<RunEvent[]> {
  const runbook = parseRunbook(fixture, text)
  const events: RunEvent[] = []
  await rehearse(
    runbook,
    {io: {confirm: async () => true, notify: (e) => void events.push(e)}, signal: new AbortController().signal, operator: 'test', approved: []},
    {pace: null, seeds: 1},
  )
  return events
}

describe('an assess step journals where it placed the pool, in numbers', () => {
  it('the placement carries the point and the edges its sentences state, and the page draws it from the journal', async () => {
    const events = await eventsOf(readFileSync(fixture, 'utf8'))
    const placements = events.filter((e): e is Extract<RunEvent, {type: 'placement'}> => e.type === 'placement')
    expect(placements).toHaveLength(1)
    const {pool, place, step} = placements[0]
    expect([pool, step, place.scenario, place.setup]).toEqual(['mailbox', 0, 'outlook-2026', 'no-guard'])
    expect(place).toMatchObject({out: 6, region: 'stuck', now: {servers: 20, healthy: 0, demand: 1500}})
    // The same numbers as the step's sentence, which is what the terminal shows.
    const end = events.find((e) => e.type === 'step-end' && e.step === 0) as Extract<RunEvent, {type: 'step-end'}>
    expect(end.message).toContain(
      `with ${place.now.servers - place.now.healthy} of ${place.now.servers} servers out of rotation at 1,500 rps (a trigger that broke ${place.out} takes the pool there`,
    )
    expect(place.capacity.inRotation).toBeLessThan(place.capacity.pool)
    // Journalled as a run journals it, the page's view has it in words and numbers.
    let seq = 0
    const entries = [
      {seq: ++seq, at: '2026-12-07T05:00:00.000Z', type: 'run-start', ...runStartFields('20261207-050000-abcd')},
      ...events.map((e) => ({seq: ++seq, at: '2026-12-07T05:00:01.000Z', ...e}) as never),
    ]
    const view = runView('20261207-050000-abcd', {entries, torn: null}, [])
    expect(view.placements).toEqual([expect.objectContaining({step: 'step 1', pool: 'mailbox', place, text: placeText('mailbox', place)})])
    expect(view.placements[0].text).toMatch(
      /^mailbox on the map of outlook-2026 \(no-guard\): 20 of 20 servers out of rotation at 1,500 rps, [\d.]+% errors, those in rotation able to serve 0 rps; placed at 6 broken: stuck; /,
    )
  }, 60_000)

  it('before the fault the same step places it unharmed, every server in rotation', async () => {
    const events = await eventsOf(readFileSync(fixture, 'utf8').replace('startAt: 200', 'startAt: 20'))
    const placement = events.find((e) => e.type === 'placement') as Extract<RunEvent, {type: 'placement'}>
    expect(placement.place).toMatchObject({out: 0, region: 'unharmed', now: {servers: 20, healthy: 20}})
    expect(placement.place.capacity.inRotation).toBe(placement.place.capacity.pool)
  }, 60_000)
})
