import {beforeEach, describe, expect, it} from 'vitest'
import {sluice} from '../helpers/cli.js'
import {uniqueName} from './seed.js'
import {useStateFixture, type Fixture} from './state-fixture.js'

let fx: Fixture
const current = useStateFixture()
beforeEach(() => {
  fx = current()
})

describe('freeze and freeze check, in another process', () => {
  it.each([
    ['the local store', () => fx.env],
    ['the team store', () => ({...fx.env, SLUICE_STATE: `dynamodb://${uniqueName('sluice')}`})],
  ])('with %s', async (_name, env) => {
    const e = env()
    expect((await sluice(['freeze', 'check'], {env: e})).code).toBe(0)
    const frozen = await sluice(['freeze', '--reason', 'mailbox recovery'], {env: e})
    expect(frozen.code, frozen.stderr).toBe(0)
    const check = await sluice(['freeze', 'check', '--json'], {env: e})
    expect(check.code).toBe(4)
    expect(JSON.parse(check.stdout)).toMatchObject({frozen: true, freeze: {reason: 'mailbox recovery'}})
    expect((await sluice(['unfreeze'], {env: e})).code).toBe(4) // not this run's freeze
    expect((await sluice(['unfreeze', '--force'], {env: e})).code).toBe(0)
    expect((await sluice(['freeze', 'check'], {env: e})).code).toBe(0)
  }, 120_000)
})
