import {afterEach, describe, expect, it} from 'vitest'
import {ControlPoller} from '../../src/state/controls.js'
import {thisHost} from '../../src/state/journal.js'
import {inProcess as sluice} from '../helpers/command.js'
import {at, letGoOfRuns, stateWith} from '../helpers/live-runs.js'

afterEach(letGoOfRuns)

const LIVE = '20261206-060000-4e4e'

describe('sluice promote --full (in process)', () => {
  it('is sent as a promote marked full, taken up by the run, and shown as `promote --full` by journal and watch', async () => {
    const {store, env} = await stateWith([{runId: LIVE, life: 'running'}])
    // This process plays the run: its control poller takes the promote up and its journal records
    // what it did, as a live run's engine does.
    const poller = new ControlPoller(
      store,
      LIVE,
      () => undefined,
      () => undefined,
    )
    await poller.start(50)
    poller.doing('the run is at step 1 (Freeze changes)')
    poller.subscribe((control, effect, did) => void store.append(LIVE, {seq: 3, at: at(3), type: 'control', control, effect, did}))
    const r = await sluice(['promote', LIVE, '--full'], {env})
    await poller.stop()
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain(`promote --full sent to run ${LIVE} (outlook-staged-return, run by alice on ${thisHost}`)
    expect(r.stdout).toContain(
      'the run took it up: promoted fully: nothing was waiting now: the run is at step 1 (Freeze changes); every bake and wait from here ends as soon as its gate has passed the times in a row it needs (a gate is still judged); an approve step still asks',
    )
    const [sent] = await store.controls(LIVE)
    expect(sent).toMatchObject({kind: 'promote', full: true})
    expect(poller.fullyPromotedBy?.operator).toBe(sent.operator)

    await store.append(LIVE, {seq: 4, at: at(4), type: 'run-end', outcome: 'completed', message: 'all steps done'})
    await store.release([], LIVE)
    const journal = await sluice(['journal', LIVE], {env})
    expect(journal.code, journal.stderr).toBe(0)
    expect(journal.stdout).toMatch(new RegExp(`promote --full by ${sent.operator} on ${thisHost} \\(pid \\d+\\): promoted fully: nothing was waiting now`))
    const watch = await sluice(['watch', LIVE], {env})
    expect(watch.code, watch.stderr).toBe(0)
    expect(watch.stdout).toContain(`promote --full by ${sent.operator} on ${thisHost}`)
    const markdown = await sluice(['journal', LIVE, '--markdown'], {env})
    expect(markdown.stdout).toContain('sluice promote --full')
  }, 60_000)

  it('a plain promote is not marked full', async () => {
    const {store, env} = await stateWith([{runId: LIVE, life: 'running'}])
    const poller = new ControlPoller(
      store,
      LIVE,
      () => undefined,
      () => undefined,
    )
    await poller.start(50)
    poller.subscribe((control, effect, did) => void store.append(LIVE, {seq: 3, at: at(3), type: 'control', control, effect, did}))
    const r = await sluice(['promote', LIVE], {env})
    await poller.stop()
    // Nothing was waiting: refused (exit 4), and the run is not promoted fully.
    expect(r.code, r.stderr).toBe(4)
    expect((await store.controls(LIVE))[0].full).toBeUndefined()
    expect(poller.fullyPromotedBy).toBeNull()
  }, 60_000)
})
