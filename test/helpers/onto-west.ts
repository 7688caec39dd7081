import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'

const tg = (name: string) => `arn:aws:elasticloadbalancing:us-east-1:123456789012:targetgroup/${name}/0123456789abcdef`
const rule = 'arn:aws:elasticloadbalancing:us-east-1:123456789012:listener-rule/app/api/9f0d3a2b1c4e5f67/abcdef0123456789/0123456789abcdef'

/**
 * A runbook, written to a new temporary directory, that moves traffic to west by weighted target
 * groups (1%, 10%, 50%, 60 s bakes) behind `gate`, rehearsed on two-regions (1,700 rps, all on east,
 * west cold): the file's path.
 */
export function ontoWestRunbook(name: string, gate: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'sluice-onto-west-')), `${name}.yaml`)
  writeFileSync(
    file,
    `name: ${name}
targets:
  targetGroups: {east: ${tg('east')}, west: ${tg('west')}}
  metrics: {source: cloudwatch, loadBalancer: app/api/9f0d3a2b1c4e5f67}
rehearsal: {scenario: two-regions, setup: cap-shed-slow-start, startAt: 60}
steps:
  - action: weighted-target-groups
    rule: ${rule}
    pool: west
    schedule: [1, 10, 50]
    bake: 60
    gate: ${gate}
`,
  )
  return file
}
