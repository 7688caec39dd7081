import {describe, expect, it} from 'vitest'
import {countsNow} from '../../src/live/counts-now.js'
import {parseRunbook} from '../../src/loader/load-runbook.js'
import type {Reading} from '../../src/ports/control-plane.js'
import {control, FakeMetrics} from '../helpers/fakes.js'

// `plan --live`'s line for a counts gate relative to before, on fake readings: the watch before
// each change holds the pool's traffic at the share before it, the bake at the share after.

const tg = (name: string) => `arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/${name}/0123456789abcdef`
const rule = 'arn:aws:elasticloadbalancing:us-east-1:123456789012:listener-rule/app/api/9f0d3a2b1c4e5f67/abcdef0123456789/0123456789abcdef'
const runbook = (schedule: string) =>
  parseRunbook(
    'test.yaml',
    `name: test
targets:
  targetGroups: {blue: ${tg('blue')}, green: ${tg('green')}}
  metrics: {source: cloudwatch, loadBalancer: app/test/1}
steps:
  - action: weighted-target-groups
    rule: ${rule}
    pool: green
    schedule: ${schedule}
    bake: 60
    gate: {metric: error-rate, threshold: 1, window: 60, interval: 10, pool: green, relativeTo: before, judge: counts}
`,
  )

/** 100 rps in all, green serving `greenRps` of them, green erring on 1%. */
const metrics = (greenRps: number) =>
  new FakeMetrics((kind, pool): Reading | number => (kind === 'request-rate' ? (pool === 'green' ? greenRps : 100) : {value: 1, requests: 1_000}))

describe('plan --live: a counts gate relative to before', () => {
  it('says what each change’s bake holds against the need, its baseline the pool at the share before it', async () => {
    const lines = await countsNow(runbook('[75, 90]'), control({metrics: metrics(50)}), 0, 10)
    // 75% of 100 rps for 60 s: 4,500; 90%: 5,400.
    expect(lines.get(0)).toMatch(
      /^now: 100 rps in all, green erring 1\.0% \(read over 10 s\); the 60 s bake holds, on green, at green 75% about 4,500 of the [\d,]+ it needs.*; at green 90% about 5,400 of the [\d,]+ it needs/,
    )
  })

  it('says a step from no traffic would stop: there is no before to judge against', async () => {
    const lines = await countsNow(runbook('[10]'), control({metrics: metrics(0)}), 0, 10)
    expect(lines.get(0)).toMatch(/at green 10% no requests on green before the change to judge against: the step would stop before changing anything/)
  })
})
