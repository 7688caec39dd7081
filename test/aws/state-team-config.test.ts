import {mkdirSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {inProcess as sluice} from '../helpers/command.js'
import {awsTestEnv} from './moto.js'
import {moto} from './state-fixture.js'
import {uniqueName} from './seed.js'

/** A user on their own machine: a home of their own whose config file names the team's table, and no flags. */
function teammate(table: string): {env: Record<string, string | undefined>; cwd: string} {
  const root = mkdtempSync(join(tmpdir(), 'sluice-teammate-'))
  mkdirSync(join(root, 'home', '.config', 'sluice'), {recursive: true})
  writeFileSync(
    join(root, 'home', '.config', 'sluice', 'config.yaml'),
    `# the team's store: every shell and pipeline sees one freeze\nstate: dynamodb://${table}\n`,
  )
  mkdirSync(join(root, 'work'))
  return {
    env: {...awsTestEnv(moto), HOME: join(root, 'home'), SLUICE_STATE: undefined, XDG_STATE_HOME: undefined, XDG_CONFIG_HOME: undefined},
    cwd: join(root, 'work'),
  }
}

describe('the team store named in a config file (DynamoDB on moto)', () => {
  it("a freeze one teammate sets is seen by another's freeze check and lifted by its owner, with no --state anywhere", async () => {
    const table = uniqueName('team')
    const alice = teammate(table)
    const pipeline = teammate(table)
    const frozen = await sluice(['freeze', '--reason', 'mailbox recovery'], {env: {...alice.env, SLUICE_OPERATOR: 'alice'}, cwd: alice.cwd})
    expect(frozen.code, frozen.stderr).toBe(0)
    expect(frozen.stderr.split('\n')[0]).toMatch(new RegExp(`^using dynamodb://${table} \\(named in .*/home/\\.config/sluice/config\\.yaml\\)$`))
    const check = await sluice(['freeze', 'check'], {env: pipeline.env, cwd: pipeline.cwd})
    expect(check.code, check.stderr).toBe(4)
    expect(check.stdout).toMatch(/by alice: mailbox recovery/)
    const lifted = await sluice(['unfreeze'], {env: {...alice.env, SLUICE_OPERATOR: 'alice'}, cwd: alice.cwd})
    expect(lifted.code, lifted.stderr).toBe(0)
    expect((await sluice(['freeze', 'check'], {env: pipeline.env, cwd: pipeline.cwd})).code).toBe(0)
  }, 60_000)
})
