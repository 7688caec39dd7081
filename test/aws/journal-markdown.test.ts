import {describe, expect, it} from 'vitest'
import type {JournalEntry} from '../../src/ports/state-store.js'
import {timelineMarkdown} from '../../src/state/timeline.js'
import {inProcess as sluice} from '../helpers/command.js'
import {seedMetrics, useLiveFixture, type Fixture} from './live-fixture.js'
import {uniqueName} from './seed.js'
import {gatedRamp} from './spawned-run.js'

// `sluice journal RUN --markdown` reads the team store as `sluice journal RUN` does: a live run
// and its rollback journalled in DynamoDB (moto), printed as Markdown from there.

let fx: Fixture
useLiveFixture((current) => (fx = current))

describe('sluice journal RUN --markdown on the DynamoDB team store', () => {
  it('a live ramp and its rollback (--now), journalled in DynamoDB: its timeline is the Markdown of the journal the store holds', async () => {
    await seedMetrics(fx, 0)
    const env = {...fx.env, SLUICE_STATE: `dynamodb://${uniqueName('sluice-md')}`, SLUICE_OPERATOR: 'alice'}
    const run = await sluice(['run', gatedRamp(fx), '--yes', '--json'], {env})
    expect(run.code, run.stderr).toBe(0)
    const runId = (JSON.parse(run.stdout) as {runId: string}).runId
    const back = await sluice(['rollback', runId, '--yes', '--now'], {env: {...env, SLUICE_OPERATOR: 'carol'}})
    expect(back.code, back.stderr + back.stdout).toBe(0)

    const shown = await sluice(['journal', runId, '--markdown'], {env})
    expect(shown.code, shown.stderr).toBe(0)
    expect(shown.stderr).toContain(`using dynamodb://`)
    const {entries} = JSON.parse((await sluice(['journal', runId, '--json'], {env})).stdout) as {entries: JournalEntry[]}
    expect(shown.stdout).toBe(`${timelineMarkdown(runId, {entries, torn: null}).trimEnd()}\n`)
    expect(shown.stdout.split('\n')[0]).toBe(`# Run ${runId}: gated-ramp`)
    expect(shown.stdout).toMatch(/^\| \*\*\d\d:\d\d:\d\d\*\* \| \*\*alice@[^|]+\*\* \| \*\*Run started\*\*/m)
    expect(shown.stdout).toMatch(/^\| \*\*\d\d:\d\d:\d\d\*\* \| \*\*carol@[^|]+\*\* \| \*\*Rollback started by carol\*\*/m)
    expect(shown.stdout).toContain('- **Status:** **rolled-back**')
    expect(shown.stdout).toMatch(
      /\| weights of [^|]+ \| \*\*back as the run found it\*\*: \{mailbox:100,maintenance:0\} \| \d+: \d+ by the steps, 1 on the way back \|/,
    )
  }, 120_000)
})
