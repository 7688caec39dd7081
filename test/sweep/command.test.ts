import {describe, expect, it} from 'vitest'
import {sluiceInProcess} from '../helpers/command.js'

/** Bad input, in this process: exit 2 and one line naming the flag. */
async function expectBadInput(args: string[], message: RegExp) {
  const {exit, stdout, stderr} = await sluiceInProcess(['simulate', ...args])
  expect(exit, stderr).toBe(2)
  expect(stdout).toBe('')
  expect(stderr.trimEnd().split('\n')).toHaveLength(1)
  expect(stderr.trimEnd()).toMatch(message)
}

describe('simulate --sweep (in process, one thread)', () => {
  it('one --sweep draws a strip per setup over one axis, with the tipping points', async () => {
    const {exit, stdout, stderr} = await sluiceInProcess([
      'simulate',
      '--sweep',
      'broken=4..8',
      '--setup',
      'no-guard',
      '--setup',
      'cap-shed-slow-start',
      '--workers',
      '1',
    ])
    expect(exit, stderr).toBe(0)
    expect(stdout).toMatch(/^no-guard +│[·░▒█]{10} {2}\d stuck, \d recovered, \d unharmed of 5$/m)
    expect(stdout).toMatch(/^cap-shed-slow-start │[░▒]{10} {2}0 stuck, 5 recovered, 0 unharmed of 5$/m)
    expect(stdout).toContain('broken servers (of 20)')
    expect(stdout).toMatch(/^ {2}no-guard tips into a stuck pool when more than 5 of 20 servers break\.$/m)
  })

  it('refuses what contradicts a sweep, naming the flag', async () => {
    await expectBadInput(
      ['--sweep', 'fault-duration=10..200', '--fix-at', '300'],
      /^Error: --fix-at: the sweep varies fault-duration; leave out --fix-at or its --sweep$/,
    )
    await expectBadInput(['--workers', '2'], /^Error: --workers: needs --sweep; it sets the threads of a sweep$/)
    await expectBadInput(
      ['--sweep', 'broken=0..2', '--sweep', 'demand=1..2', '--sweep', 'servers=1..2'],
      /^Error: --sweep: at most two \(an x and a y axis\), got 3/,
    )
    await expectBadInput(['--sweep', 'broken=0..2', '--workers', '0'], /^Error: --workers: /)
  })
})
