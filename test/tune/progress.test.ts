import {describe, expect, it} from 'vitest'
import type {RampSite} from '../../src/tune/ramps.js'
import {tuneProgress} from '../../src/cli/tune-progress.js'
import type {TuneEvent} from '../../src/tune/tune.js'

const site = {title: 'Bring the rest of the traffic back'} as RampSite
const events: TuneEvent[] = [
  {type: 'phase', message: 'rehearsing x as shipped'},
  {type: 'ramp-deferred', pass: 1, site: {title: 'Park traffic'} as RampSite, failedStep: 6, before: false},
  {type: 'rehearsal', count: 1},
  {type: 'rehearsal', count: 2},
  {type: 'ramp', pass: 1, site, tried: 12, best: {schedule: [62, 83, 100], bake: 60}, score: {secondsToFullTraffic: 544, seconds: 724}},
  {type: 'ramp', pass: 2, site, tried: 3, best: null, score: null},
]

function shown(mode: 'tty' | 'lines' | 'silent'): string {
  let out = ''
  const progress = tuneProgress(mode, (text) => (out += text))
  for (const event of events) progress.onEvent(event)
  progress.done()
  return out
}

describe('tune: progress on stderr', () => {
  it('in a log, a line per phase and per ramp tuned, none per rehearsal', () => {
    expect(shown('lines')).toBe(
      [
        'rehearsing x as shipped',
        'pass 1 · Park traffic: left for the next pass: the rehearsal first misses at step 7, after a later ramp has begun',
        'pass 1 · Bring the rest of the traffic back: 12 tried, [62, 83, 100] bake 60 s, full traffic at 544 s',
        'pass 2 · Bring the rest of the traffic back: 3 tried, nothing faster that passes',
        '',
      ].join('\n'),
    )
  })

  it('on a terminal, one line redrawn in place with the rehearsals so far, each ramp kept above it, cleared at the end', () => {
    const out = shown('tty')
    expect(out).toMatch(/^\r\u001B\[Krehearsing x as shipped · 0 rehearsals · [\d.]+ s/)
    expect(out).toContain('\r\u001B[Kpass 1 · Bring the rest of the traffic back: 12 tried, [62, 83, 100] bake 60 s, full traffic at 544 s\n')
    expect(out.endsWith('\r\u001B[K')).toBe(true)
  })

  it('under --json, nothing', () => {
    expect(shown('silent')).toBe('')
  })
})
