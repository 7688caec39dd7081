import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {pathToFileURL} from 'node:url'
import {describe, expect, it} from 'vitest'
import {packageRoot} from '../../src/package-root.js'
import {sha256} from '../../src/state/journal.js'
import {predict, predictApart} from '../../src/serve/prediction.js'
import {runStartFields} from '../helpers/journal-entries.js'

const file = join(packageRoot, 'runbooks', 'drill-cold-return.yaml')
const journal = (fields: Record<string, unknown>) => ({
  entries: [{seq: 1, at: '2026-12-07T04:00:00.000Z', type: 'run-start', ...runStartFields('20261207-040000-abcd'), ...fields}],
  torn: null,
})

describe('the prediction beside a run', () => {
  it("rehearses the run's own runbook from its start: its outcome, its loss and its weights over time", async () => {
    const p = await predict(journal({runbookFile: file, runbookSha256: sha256(readFileSync(file, 'utf8'))}))
    expect('none' in p, JSON.stringify(p)).toBe(false)
    if ('none' in p) return
    expect(p).toMatchObject({scenario: 'drill-cold-return', outcome: 'completed'})
    // At least its first step's 30 s bake.
    expect(p.seconds).toBeGreaterThanOrEqual(30)
    // Everything to green at once: the last weights give green all of it.
    expect(p.weights.at(-1)!.shares).toEqual({blue: 0, green: 100})
    expect(p.weights.every((w) => w.t >= 0 && w.t <= p.seconds)).toBe(true)
  })

  it('says why there is none: a runbook changed since the run started, one not on this machine, a run from flags', async () => {
    expect(await predict(journal({runbookFile: file, runbookSha256: 'not-its-hash'}))).toEqual({
      none: `its runbook ${file} has changed since the run started: a rehearsal of it would not be this run's`,
    })
    expect(await predict(journal({runbookFile: '/nowhere/x.yaml'}))).toEqual({
      none: 'its runbook /nowhere/x.yaml cannot be read here (serve rehearses it from this machine)',
    })
    expect(await predict(journal({runbookFile: undefined, runbookInput: {}}))).toEqual({
      none: 'the run was started from flags, not a runbook file: there is no runbook to rehearse',
    })
  })

  it('starts no thread for a run with nothing to rehearse: the reason is answered at once', async () => {
    // A thread that would answer otherwise, so that its starting shows.
    const program = join(mkdtempSync(join(tmpdir(), 'sluice-prediction-')), 'worker.mjs')
    writeFileSync(program, "import {parentPort} from 'node:worker_threads'\nparentPort.postMessage({none: 'the thread ran'})\n")
    const url = pathToFileURL(program)
    expect(await predictApart(journal({runbookFile: '/nowhere/x.yaml'}), url)).toEqual({
      none: 'its runbook /nowhere/x.yaml cannot be read here (serve rehearses it from this machine)',
    })
    expect(await predictApart(journal({runbookFile: file, runbookSha256: sha256(readFileSync(file, 'utf8'))}), url)).toEqual({none: 'the thread ran'})
  })
})
