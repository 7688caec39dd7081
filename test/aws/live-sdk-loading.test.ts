import {existsSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {sluice} from '../helpers/cli.js'
import {useLiveFixture, type Fixture} from './live-fixture.js'
import {liveCopy} from './live-runbook.js'

let fx: Fixture
useLiveFixture((current) => (fx = current))

describe('what loads the AWS SDK', () => {
  const spy = (file: string) => ({NODE_OPTIONS: `--import ${join(process.cwd(), 'test/helpers/module-spy.mjs')}`, SLUICE_MODULE_SPY: file})

  it('--help and a dry run load no AWS SDK module; a live run does', async () => {
    const help = join(fx.dir, 'help.log')
    const dry = join(fx.dir, 'dry.log')
    const live = join(fx.dir, 'live.log')
    await sluice(['--help'], {env: spy(help)})
    const rehearsal = await sluice(['run', 'runbooks/regional-dns-ramp.yaml', '--dry-run'], {env: spy(dry)})
    expect(rehearsal.code).toBe(0)
    const status = await sluice(['status', liveCopy('runbooks/naive-full-return.yaml', fx.targets, fx.dir, fx.hook)], {env: {...fx.env, ...spy(live)}})
    expect(status.code, status.stderr).toBe(0)
    const read = (f: string) => (existsSync(f) ? readFileSync(f, 'utf8') : '')
    expect(read(help)).toBe('')
    expect(read(dry)).toBe('')
    expect(read(live)).toContain('@aws-sdk/client-elastic-load-balancing-v2')
  }, 120_000)
})
