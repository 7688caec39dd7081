import {describe, expect, it} from 'vitest'
import {InputError} from '../../src/errors.js'
import type {RunListing} from '../../src/state/run-life.js'
import {onlyLiveRun} from '../../src/state/live-run.js'

const run = (runId: string, status: string, extra: Partial<RunListing> = {}): RunListing => ({
  runId,
  status,
  runbook: 'outlook-staged-return',
  operator: 'alice',
  host: 'bastion',
  startedAt: '2026-12-04T06:00:00.000Z',
  ...extra,
})

describe('onlyLiveRun: the run watch and pause mean with no RUN', () => {
  it('takes the one running run, whatever ended, died or is still unjudged beside it', () => {
    const live = run('20261204-060000-1b1b', 'running')
    expect(
      onlyLiveRun([run('20261204-050000-0a0a', 'completed'), live, run('20261204-055000-3d3d', 'dead', {detail: 'pid 4242 gone'})], 'local state /s', 'watch'),
    ).toBe(live)
  })

  it('none running (an unfinished one is not taken on a guess): bad input naming the store and sluice journal', () => {
    const none = () => onlyLiveRun([run('20261204-050000-0a0a', 'completed'), run('20261204-055000-3d3d', 'unfinished')], 'local state /s', 'pause')
    expect(none).toThrow(InputError)
    expect(none).toThrow('no live run in local state /s; `sluice journal` lists the runs')
  })

  it('several running: bad input naming each with its runbook and who, and how to name one', () => {
    const several = () =>
      onlyLiveRun(
        [run('20261204-060000-1b1b', 'running'), run('20261204-061500-2c2c', 'running', {runbook: 'regional-dns-ramp', operator: 'bob', host: 'ci'})],
        'dynamodb table sluice-state',
        'pause',
      )
    expect(several).toThrow(
      '2 live runs in dynamodb table sluice-state: 20261204-060000-1b1b (outlook-staged-return, by alice@bastion), 20261204-061500-2c2c (regional-dns-ramp, by bob@ci); name one: `sluice pause RUN`',
    )
  })
})
