import {existsSync, readdirSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {Ajv2020} from 'ajv/dist/2020.js'
import {describe, expect, it} from 'vitest'
import {parse} from 'yaml'
import {runbookJsonSchema} from '../../src/loader/json-schema.js'
import {runbookSchema} from '../../src/loader/runbook-schema.js'
import {inProcess as sluice} from '../helpers/command.js'

const runbooksDir = fileURLToPath(new URL('../../runbooks', import.meta.url))

// Full strict mode: an editor or CI linter may be just as picky, so the schema is fixed to pass
// rather than the validator loosened.
const ajv = new Ajv2020({strict: true, allErrors: true})
const validate = ajv.compile(runbookJsonSchema())

function schemaErrors(data: unknown): string {
  return validate(data) ? '' : ajv.errorsText(validate.errors)
}

/** Valid by both the JSON Schema and zod, so the examples cannot drift from what sluice loads. */
function expectValid(data: unknown) {
  expect(schemaErrors(data)).toBe('')
  expect(runbookSchema.safeParse(data).error).toBeUndefined()
}

/** Invalid by both: a case the JSON Schema refuses must be one sluice refuses too. */
function expectInvalid(data: unknown) {
  expect(validate(data)).toBe(false)
  expect(runbookSchema.safeParse(data).success).toBe(false)
}

const gate = {metric: 'error-rate', threshold: 1, window: '1m', interval: 10, failureLimit: 2, inconclusiveLimit: 3, successes: 3, pool: 'blue'}

const everyAction = {
  name: 'drain-and-ramp',
  description: 'Every step action with most of its fields.',
  targets: {
    dns: {zone: 'example.com', record: 'api.example.com', type: 'CNAME', ttl: 60, sets: {blue: 'blue', green: 'green'}},
    targetGroups: {
      blue: 'arn:aws:elasticloadbalancing:eu-west-1:123:targetgroup/blue/1',
      green: 'arn:aws:elasticloadbalancing:eu-west-1:123:targetgroup/green/2',
    },
    listener: 'arn:aws:elasticloadbalancing:eu-west-1:123:listener/app/api/1/2',
    metrics: {source: 'cloudwatch', loadBalancer: 'app/api/1'},
  },
  defaults: {bake: '2m', gate: {threshold: 2, window: 60, successes: 2}},
  rehearsal: {scenario: 'outlook-2026', setup: 'panic-50', startAt: '90s'},
  steps: [
    {action: 'freeze', name: 'stop deploys', reason: 'incident 42', expires: '1h', timeout: 90, onFailure: 'abort'},
    {action: 'restrict', type: 'shed-batch', paths: ['/batch', '/export'], headers: {'x-client': ['cron']}, retryAfter: '2m'},
    {action: 'approve', message: 'Restriction in place; cycle blue?', timeout: '5m'},
    {
      action: 'cycle',
      pool: 'blue',
      batch: '25%',
      budget: 3,
      headroom: 20,
      capacityPerTarget: 150,
      restart: {command: ['systemctl', 'restart', 'api'], timeout: '30s'},
      remediate: {command: ['/opt/fix', '{id}']},
      slowStart: 30,
      drainTimeout: '2m',
      healthyTimeout: 300,
      bake: '250ms',
      gate: {metric: 'healthy-targets', threshold: 90},
      onFailure: 'hold',
    },
    {action: 'cycle', pool: 'green', batch: 3},
    {action: 'ramp', set: 'green', schedule: [10, 50, 100], bake: '1.5m', allowShortBake: true, gate},
    {action: 'ramp', set: 'green', schedule: {linear: {from: 0, to: 100, steps: 5}}},
    {action: 'ramp', set: 'blue', schedule: {exponential: {from: 1, factor: 2, to: 100}}, onFailure: 'rollback'},
    {action: 'wait', for: '5m'},
    {action: 'check', gate: {metric: 'latency-p99', threshold: 400}, bake: 60},
    {action: 'lift', type: 'shed-batch'},
    {action: 'unfreeze'},
  ],
}

const minimal = {name: 'one-wait', targets: {}, steps: [{action: 'wait', for: 90}]}

function withStep(step: Record<string, unknown>) {
  return {...minimal, steps: [step]}
}

describe('runbookJsonSchema', () => {
  it('is a draft 2020-12 schema with an id, a title and a description', () => {
    const schema = runbookJsonSchema() as Record<string, unknown>
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema')
    expect(schema.$id).toBe('https://sluice.dev/schemas/runbook.json')
    expect(schema.title).toEqual(expect.any(String))
    expect(schema.description).toEqual(expect.any(String))
    expect(schema.additionalProperties).toBe(false)
  })

  it('is deterministic', () => {
    expect(JSON.stringify(runbookJsonSchema())).toBe(JSON.stringify(runbookJsonSchema()))
  })

  it('keeps the defaults that mean the same before and after parsing', () => {
    type Node = {properties: Record<string, Node>; items: Node; oneOf: Node[]; const?: string; default?: unknown}
    const schema = runbookJsonSchema() as Node
    const step = (action: string) => schema.properties.steps.items.oneOf.find((s) => s.properties.action.const === action)!.properties
    // zod drops a default behind a transform on the input side; a duration's is restored because
    // seconds are valid input that means the same.
    expect(step('restrict').retryAfter.default).toBe(120)
    expect(step('cycle').drainTimeout.default).toBe(300)
    expect(step('cycle').restart.properties['ec2-reboot'].properties.settle.default).toBe(30)
    // A restart's timeout depends on its way (an ECS replacement takes longer): no one default, said in words.
    expect(step('cycle').restart.properties.timeout.default).toBeUndefined()
    expect((step('cycle').restart.properties.timeout as Node & {description: string}).description).toMatch(/command, ssm, ec2-reboot: 300; ecs-replace: 600/)
    expect(schema.properties.rehearsal.properties.startAt.default).toBe(0)
    expect(step('ramp').allowShortBake.default).toBe(false)
    expect(step('restrict').paths.default).toEqual([])
  })

  it('accepts runbooks using every step action', () => {
    expectValid(everyAction)
    expectValid(minimal)
  })

  it('accepts durations and counts in both of their forms', () => {
    for (const timeout of [90, 0, 1.5, '90s', '5m', '1h', '250ms', '1.5m']) expectValid(withStep({action: 'unfreeze', timeout}))
    for (const batch of [1, 3, '25%', '12.5%']) expectValid(withStep({action: 'cycle', pool: 'web', batch}))
  })

  it('accepts every runbook in runbooks/', () => {
    const files = existsSync(runbooksDir)
      ? readdirSync(runbooksDir, {recursive: true, encoding: 'utf8'})
          .filter((f) => /\.ya?ml$/.test(f))
          .sort()
      : []
    // Only once the directory exists: an empty runbooks/ means the examples went missing.
    if (existsSync(runbooksDir)) expect(files.length).toBeGreaterThan(0)
    const failures = files
      .map((file) => ({file, errors: schemaErrors(parse(readFileSync(join(runbooksDir, file), 'utf8')))}))
      .filter(({errors}) => errors !== '')
    expect(failures).toEqual([])
  })

  it('rejects an unknown step action', () => {
    expectInvalid(withStep({action: 'reboot', pool: 'web'}))
  })

  it('rejects an unknown key on a step', () => {
    expectInvalid(withStep({action: 'wait', for: 30, until: 'healthy'}))
    expectInvalid(withStep({action: 'cycle', pool: 'web', batch: 1, gate: {metric: 'error-rate', tolerance: 2}}))
  })

  it('rejects an unknown key at the top level', () => {
    expectInvalid({...minimal, stpes: []})
  })

  it('rejects a runbook without steps, or with none', () => {
    const {steps: _, ...noSteps} = minimal
    expectInvalid(noSteps)
    expectInvalid({...minimal, steps: []})
  })

  it('rejects a gate metric outside the enum', () => {
    expectInvalid(withStep({action: 'check', gate: {metric: 'cpu', threshold: 80}}))
  })

  it('rejects a duration that is not a number or a number with a unit', () => {
    for (const bad of ['5 minutes', '5min', '-5s', 'm', -1]) expectInvalid(withStep({action: 'wait', for: bad}))
  })

  it('rejects a batch that is neither a positive count nor a percentage', () => {
    for (const bad of [0, 2.5, '25', 'half']) expectInvalid(withStep({action: 'cycle', pool: 'web', batch: bad}))
  })

  it('rejects DNS targets with no weighted sets (a refine zod cannot export)', () => {
    expectInvalid({...minimal, targets: {dns: {zone: 'example.com', record: 'api.example.com', sets: {}}}})
  })
})

describe('descriptions, for an editor to show on hover', () => {
  /** Every property of every object the schema describes, with the JSON path to it. */
  function properties(node: unknown, at = '#'): Array<{at: string; schema: {description?: unknown}}> {
    if (node === null || typeof node !== 'object') return []
    const found: Array<{at: string; schema: {description?: unknown}}> = []
    const props = (node as {properties?: Record<string, {description?: unknown}>}).properties
    if (props) for (const [key, schema] of Object.entries(props)) found.push({at: `${at}/properties/${key}`, schema})
    for (const [key, child] of Object.entries(node)) found.push(...properties(child, `${at}/${key}`))
    return found
  }

  it('every property of the runbook schema has a non-empty description', () => {
    const all = properties(runbookJsonSchema())
    // Guards the walk itself: a schema whose properties it failed to reach would pass trivially.
    expect(all.length).toBeGreaterThan(80)
    const undescribed = all.filter(({schema}) => typeof schema.description !== 'string' || schema.description.trim() === '').map(({at}) => at)
    expect(undescribed).toEqual([])
  })
})

describe('sluice schema', () => {
  it('prints the schema, pretty, and exits 0', async () => {
    const {code, stdout, stderr} = await sluice(['schema'])
    expect(code, stderr).toBe(0)
    expect(JSON.parse(stdout)).toEqual(runbookJsonSchema())
    expect(stdout).toBe(`${JSON.stringify(runbookJsonSchema(), null, 2)}\n`)
  })

  it('prints the same schema under --json', async () => {
    const {code, stdout, stderr} = await sluice(['schema', '--json'])
    expect(code, stderr).toBe(0)
    expect(JSON.parse(stdout)).toEqual(runbookJsonSchema())
  })
})
