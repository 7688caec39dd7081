import {existsSync, mkdtempSync, readFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {isolatedSluice, root} from '../helpers/cli.js'

// What a process loads is only seen from outside it: a Node loader hook (test/helpers/module-spy.mjs)
// writes down every AWS SDK module the CLI resolves. test/aws/live-sdk-loading.test.ts does the same
// against moto for a live run that succeeds.

const sluice = isolatedSluice('sdk-loading')
const dir = mkdtempSync(join(tmpdir(), 'sluice-sdk-loading-'))
const spy = (name: string) => {
  const file = join(dir, `${name}.log`)
  return {file, env: {NODE_OPTIONS: `--import ${join(root, 'test/helpers/module-spy.mjs')}`, SLUICE_MODULE_SPY: file}}
}
const loaded = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8') : '')

describe.concurrent('what loads the AWS SDK (spawned)', () => {
  it('--help and dry runs load no AWS SDK module', async () => {
    const help = spy('help')
    const dry = spy('dry')
    const single = spy('single')
    const [h, d, s] = await Promise.all([
      sluice(['--help'], {env: help.env}),
      sluice(['run', 'runbooks/regional-dns-ramp.yaml', '--dry-run'], {cwd: root, env: dry.env}),
      sluice(['ramp', '--set', 'west', '--schedule', '1,5,50', '--bake', '60', '--scenario', 'two-regions', '--dry-run'], {env: single.env}),
    ])
    expect([h.code, d.code, s.code], `${h.stderr}${d.stderr}${s.stderr}`).toEqual([0, 0, 0])
    expect(loaded(help.file)).toBe('')
    expect(loaded(dry.file)).toBe('')
    expect(loaded(single.file)).toBe('')
  })

  it('a command that asks AWS loads it: the spy sees what it is there to see', async () => {
    const status = spy('status')
    const r = await sluice(['status', 'runbooks/outlook-staged-return.yaml'], {
      cwd: root,
      env: {...status.env, AWS_ENDPOINT_URL: 'http://127.0.0.1:9', AWS_REGION: 'eu-west-1'},
    })
    expect(r.code, r.stderr).toBe(1)
    expect(loaded(status.file)).toContain('@aws-sdk/client-route-53')
  })
})
