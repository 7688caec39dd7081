import {describe, expect, it} from 'vitest'
import {InputError} from '../../src/errors.js'
import {envSeconds} from '../../src/input/env-seconds.js'
import {LEASE_SECONDS, leaseSeconds} from '../../src/state/leases.js'

const setting = {name: 'SLUICE_EXAMPLE_SECONDS', what: 'an example length', fallback: 30, min: 1, max: 600}

describe('a length of time from the environment', () => {
  it('is the default when unset or empty, as a shell’s `NAME= sluice …` means it', () => {
    expect(envSeconds(setting, {})).toBe(30)
    expect(envSeconds(setting, {SLUICE_EXAMPLE_SECONDS: ''})).toBe(30)
  })

  it('takes whole and fractional seconds within its range, the bounds included', () => {
    expect(envSeconds(setting, {SLUICE_EXAMPLE_SECONDS: '3'})).toBe(3)
    expect(envSeconds(setting, {SLUICE_EXAMPLE_SECONDS: '2.5'})).toBe(2.5)
    expect(envSeconds(setting, {SLUICE_EXAMPLE_SECONDS: '1'})).toBe(1)
    expect(envSeconds(setting, {SLUICE_EXAMPLE_SECONDS: '600'})).toBe(600)
  })

  it.each(['abc', '3s', '0', '-5', '0.5', '601', 'Infinity', 'NaN', ' '])(
    'refuses %j as bad input (exit 2) naming the variable, what it sets and what it may be',
    (raw) => {
      const read = () => envSeconds(setting, {SLUICE_EXAMPLE_SECONDS: raw})
      expect(read).toThrow(InputError)
      expect(read).toThrow(`$SLUICE_EXAMPLE_SECONDS (an example length): expected seconds from 1 to 600 (unset: 30), got ${JSON.stringify(raw)}`)
    },
  )
})

describe('$SLUICE_LEASE_SECONDS', () => {
  it("is a lock's lease: 30 s by default, up to the 3600 s a lock record may claim", () => {
    expect(LEASE_SECONDS).toBe(30)
    expect(leaseSeconds({})).toBe(30)
    expect(leaseSeconds({SLUICE_LEASE_SECONDS: '3'})).toBe(3)
    expect(leaseSeconds({SLUICE_LEASE_SECONDS: '3600'})).toBe(3600)
    expect(() => leaseSeconds({SLUICE_LEASE_SECONDS: '3601'})).toThrow(
      `$SLUICE_LEASE_SECONDS (a lock's lease): expected seconds from 1 to 3600 (unset: 30), got "3601"`,
    )
  })
})
