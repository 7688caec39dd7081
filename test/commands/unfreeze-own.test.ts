import {mkdtempSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, beforeEach, describe, expect, it} from 'vitest'
import {sluiceInProcess} from '../helpers/command.js'

// `sluice freeze` and `sluice unfreeze` by hand, in this process, on a state directory of their
// own; the environment is put back afterwards, since the unit project shares its workers between files.
const names = ['SLUICE_STATE', 'SLUICE_OPERATOR'] as const
const saved = Object.fromEntries(names.map((k) => [k, process.env[k]]))
beforeEach(() => {
  process.env.SLUICE_STATE = join(mkdtempSync(join(tmpdir(), 'sluice-unfreeze-')), 'state')
})
afterAll(() => {
  for (const k of names) {
    if (saved[k] === undefined) delete process.env[k]
    else process.env[k] = saved[k]
  }
})

async function as(operator: string, args: string[]) {
  process.env.SLUICE_OPERATOR = operator
  return sluiceInProcess(args)
}

const frozenCheck = async () => (await sluiceInProcess(['freeze', 'check'])).exit

describe('unfreeze by hand says the freeze is not its own only when it is not', () => {
  it("the operator who froze by hand lifts it without being told it is another's", async () => {
    expect((await as('alice', ['freeze', '--reason', 'mailbox recovery', '--yes'])).exit).toBe(0)
    const own = await as('alice', ['unfreeze', '--yes'])
    expect(own.exit, own.stderr).toBe(0)
    expect(own.stderr).toMatch(/unfrozen \(was frozen since \S+ by alice in run \S+: mailbox recovery\)/)
    expect(own.stderr + own.stdout).not.toContain("not this run's")
    expect(own.stderr).not.toContain('not as the runbook expects')
    expect(await frozenCheck()).toBe(0)
  })

  it('another operator is told it is not theirs (in the plan and in the refusal), and it stays', async () => {
    expect((await as('alice', ['freeze', '--reason', 'mailbox recovery', '--yes'])).exit).toBe(0)
    const other = await as('bob', ['unfreeze', '--yes'])
    expect(other.exit, other.stderr).toBe(4)
    expect(other.stderr).toMatch(
      /! not as the runbook expects: the freeze in place is not this run's \(frozen since \S+ by alice in run \S+: mailbox recovery\)/,
    )
    expect(other.stderr).toContain("the freeze in place is not this run's to lift")
    expect(await frozenCheck()).toBe(4)
  })
})
