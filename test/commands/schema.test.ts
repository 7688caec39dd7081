import {Ajv2020} from 'ajv/dist/2020.js'
import {readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {parse} from 'yaml'
import {root, sluiceInProcess} from '../helpers/command.js'

describe('sluice schema (in process)', () => {
  it('prints the runbook JSON Schema on stdout, the same under --json, and nothing on stderr', async () => {
    const text = await sluiceInProcess<object>(['schema'])
    expect(text.exit, text.stderr).toBe(0)
    expect(text.stderr).toBe('')
    const schema = JSON.parse(text.stdout) as {$schema: string; properties: Record<string, unknown>}
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema')
    expect(Object.keys(schema.properties)).toEqual(expect.arrayContaining(['name', 'targets', 'defaults', 'rehearsal', 'steps']))
    expect(text.result).toEqual(schema)

    const json = await sluiceInProcess(['schema', '--json'])
    expect(json.exit).toBe(0)
    expect(JSON.parse(json.stdout)).toEqual(schema)
  })

  it('accepts the shipped runbooks', async () => {
    const {stdout} = await sluiceInProcess(['schema'])
    const validate = new Ajv2020({strict: false}).compile(JSON.parse(stdout))
    for (const name of ['outlook-staged-return', 'regional-dns-ramp', 'thread-hold-recovery', 'naive-full-return']) {
      const ok = validate(parse(readFileSync(`${root}runbooks/${name}.yaml`, 'utf8')))
      expect(ok, `${name}: ${JSON.stringify(validate.errors)}`).toBe(true)
    }
  })
})
