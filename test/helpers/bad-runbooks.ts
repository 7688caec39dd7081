/**
 * Bad runbooks, each with where its error must point and what it must say: checked in process
 * against the loader (test/runbook/load.test.ts) and through the CLI (test/cli/bad-runbooks.test.ts).
 */

/**
 * `line:column` (both from 1) of `needle` in `text`; with `within`, of the last `needle` inside the
 * first occurrence of `within`, e.g. the value of one key: at(text, '30', 'bake: 30').
 */
export function at(text: string, needle: string, within = needle): string {
  const outer = text.indexOf(within)
  if (outer < 0) throw new Error(`"${within}" is not in the fixture`)
  const inner = within.lastIndexOf(needle)
  if (inner < 0) throw new Error(`"${needle}" is not in "${within}"`)
  const offset = outer + inner
  const line = text.slice(0, offset).split('\n').length
  const column = offset - text.lastIndexOf('\n', offset - 1)
  return `${line}:${column}`
}

/** A YAML "billion laughs", ten levels of nine aliases: both the loader and the CLI must refuse it before it expands. */
export function aliasBomb(name: string): string {
  const letters = 'abcdefghij'
  let text = `name: ${name}\nlol: &a [x, x, x, x, x, x, x, x, x]\n`
  for (let i = 1; i < letters.length; i++)
    text += `l${i}: &${letters[i]} [${Array(9)
      .fill(`*${letters[i - 1]}`)
      .join(', ')}]\n`
  return `${text}steps: []\n`
}

export const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** A weighted record with sets for east and west, gated by CloudWatch: the targets most bad runbooks share. */
export const twoRegionsTargets = `targets:
  dns:
    zone: Z2FDTNDATAQYW2
    record: api.example.com.
    ttl: 60
    sets: {api-east: east, api-west: west}
  metrics: {source: cloudwatch, loadBalancer: app/test/1}
`

export const twoRegionsDns = `${twoRegionsTargets}rehearsal:
  scenario: two-regions
`

export interface BadCase {
  name: string
  text: string
  /** Where the error must point, as line:column. */
  where: (text: string) => string
  /** The rest of the line after `file:line:column: `. */
  message: RegExp
}

export const cases: BadCase[] = [
  {
    name: 'an unknown step (action: frobnicate)',
    text: `name: unknown-step
${twoRegionsDns}steps:
  - action: freeze
    reason: rehearsal
  - action: frobnicate
    pool: east
`,
    where: (t) => at(t, 'frobnicate'),
    message:
      /^steps\[1\]\.action: expected one of freeze, unfreeze, restrict, lift, cycle, ramp, weighted-target-groups, approve, wait, check, assess, got "frobnicate"$/,
  },
  {
    name: 'a weight over 100% in a ramp schedule',
    text: `name: overweight
${twoRegionsDns}steps:
  - action: ramp
    set: api-west
    schedule: [1, 50, 150]
    bake: 60
`,
    where: (t) => at(t, '150'),
    message: /^steps\[0\]\.schedule\[2\]: expected a weight of at most 100%, got 150%$/,
  },
  {
    name: 'a cycle naming a pool that is not in targets.targetGroups',
    text: `name: missing-group
targets:
  targetGroups:
    east: arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/east/1a2b3c4d
rehearsal:
  scenario: two-regions
steps:
  - action: cycle
    pool: west
    batch: 2
`,
    where: (t) => at(t, 'west', 'pool: west'),
    message: /^steps\[0\]\.pool: no target group for pool "west" in targets\.targetGroups; it has east$/,
  },
  {
    name: 'a restrict step without targets.listener',
    text: `name: missing-listener
${twoRegionsDns}steps:
  - action: freeze
    reason: rehearsal
  - action: restrict
    type: background-sync
    paths: [/sync/*]
`,
    where: (t) => at(t, 'action: restrict'),
    message: /^steps\[1\]: a restrict step needs targets\.listener\b/,
  },
  {
    name: 'a bake shorter than the TTL, with no allowShortBake',
    text: `name: short-bake
${twoRegionsDns}steps:
  - action: ramp
    set: api-west
    schedule: [5, 50]
    bake: 30
`,
    where: (t) => at(t, '30', 'bake: 30'),
    message: /^steps\[0\]\.bake: a bake of 30 s is shorter than the record's TTL of 60 s\b.*allowShortBake: true$/,
  },
  {
    name: 'a bake shorter than the TTL, from defaults.bake (the step is named)',
    text: `name: short-default-bake
${twoRegionsDns}defaults:
  bake: 45
steps:
  - action: ramp
    set: api-west
    schedule: [5, 50]
`,
    where: (t) => at(t, 'ramp', 'action: ramp'),
    message: /^steps\[0\]\.action: a bake of 45 s is shorter than the record's TTL of 60 s\b/,
  },
  {
    name: 'a batch larger than the disruption budget',
    text: `name: big-batch
targets:
  targetGroups:
    west: arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/west/1a2b3c4d
rehearsal:
  scenario: two-regions
steps:
  - action: cycle
    pool: west
    batch: 50%
    budget: 25%
`,
    where: (t) => at(t, '50%', 'batch: 50%'),
    message: /^steps\[0\]\.batch: a batch of 50% is larger than the disruption budget of 25%$/,
  },
  {
    name: 'a gate with no threshold, and none in defaults.gate',
    text: `name: no-threshold
${twoRegionsDns}defaults:
  gate:
    window: 30
steps:
  - action: check
    gate:
      metric: error-rate
      pool: west
`,
    where: (t) => at(t, 'metric: error-rate'),
    message: /^steps\[0\]\.gate: gate on error-rate has no threshold, and defaults\.gate sets none$/,
  },
  {
    name: 'malformed YAML: a key given twice',
    text: `name: twice
${twoRegionsDns}steps:
  - action: unfreeze
name: again
`,
    where: (t) => at(t, 'name: again'),
    message: /^malformed YAML: Map keys must be unique$/,
  },
  {
    name: 'malformed YAML: a mapping where a plain value belongs',
    text: `name: nested
${twoRegionsDns}steps:
  - action: freeze
    reason: traffic: back
`,
    where: (t) => at(t, 'traffic: back'),
    message: /^malformed YAML: .*mapping/i,
  },
  {
    name: 'malformed YAML: a tab as indentation',
    text: `name: tabbed
${twoRegionsDns}steps:
\t- action: unfreeze
`,
    where: (t) => at(t, '\t'),
    message: /^malformed YAML: Tabs are not allowed as indentation$/,
  },
  {
    name: 'a Prometheus URL with a password in it',
    text: `name: prom-password
targets:
  dns: {zone: Z1, record: api.example.com, sets: {api-west: west, api-east: east}}
  metrics: {source: prometheus, url: 'http://ops:hunter2@prometheus.internal:9090', queries: {error-rate: errors}}
steps:
  - {action: freeze, reason: rehearsal}
`,
    where: (t) => at(t, "'http://ops"),
    message:
      /^targets\.metrics\.url: a URL with credentials \(user:password@\) would put them in the journal and every log; give the Authorization header in an environment variable named by authorizationEnv instead$/,
  },
]
