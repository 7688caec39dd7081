import {describe, expect, it} from 'vitest'
import {parseRunbook} from '../../src/loader/load-runbook.js'
import {loadRunbook} from '../../src/loader/shipped.js'
import {backendOf} from '../../src/runbook/targets.js'
import {checkRehearsalScenario} from '../../src/wiring/rehearsal.js'

// The rehearsal checks a runbook against its scenario through its family's face, never by asking
// which family it is: where a weighted set is declared, and whether a pool may be a sorry one.

const onAws = (targetGroups: string) => `name: faces
targets:
  dns:
    zone: Z1
    record: mail.example.com.
    ttl: 30
    sets: {main: mailbox, parked: maintenance}
  targetGroups: {${targetGroups}}
rehearsal:
  scenario: outlook-recovery
steps:
  - {action: ramp, set: main, schedule: [100], bake: 30}
`

describe("a runbook against its rehearsal scenario, through its family's face", () => {
  it('on AWS a target group is only ever cycled: one on a sorry pool is refused at its place in targets.targetGroups', () => {
    const runbook = parseRunbook('faces.yaml', onAws('mailbox: arn:tg/mailbox, maintenance: arn:tg/maintenance'))
    expect(backendOf(runbook.targets).poolsMayBeSorry).toBe(false)
    expect(() => checkRehearsalScenario(runbook)).toThrow(
      /^faces\.yaml:8:\d+: pool "maintenance" is a sorry pool in outlook-recovery; it has no targets to cycle$/,
    )
    expect(() => checkRehearsalScenario(parseRunbook('faces.yaml', onAws('mailbox: arn:tg/mailbox')))).not.toThrow()
  })

  it("on AWS a weighted set's pool missing from the scenario is named at the set, in targets.dns.sets", () => {
    const runbook = parseRunbook('faces.yaml', onAws('mailbox: arn:tg/mailbox').replace('parked: maintenance', 'parked: calendar'))
    expect(backendOf(runbook.targets).setPath('parked')).toEqual(['targets', 'dns', 'sets', 'parked'])
    expect(() => checkRehearsalScenario(runbook)).toThrow(
      /^faces\.yaml:7:\d+: the rehearsal scenario outlook-recovery has no pool "calendar"; its pools are mailbox, maintenance$/,
    )
  })

  it('on HAProxy a backend may be the sorry pool a ramp parks traffic on; a ramp-map set is declared at its pool', () => {
    const runbook = loadRunbook('outlook-staged-return-haproxy')
    const backend = backendOf(runbook.targets)
    expect(backend.poolsMayBeSorry).toBe(true)
    expect(backend.setPath('maintenance')).toEqual(['targets', 'haproxy', 'backends', 'maintenance'])
    expect(() => checkRehearsalScenario(runbook)).not.toThrow()
  })

  it("AWS says its pools are fronted by an ALB, for an assess step's levers; HAProxy leaves it to the scenario", () => {
    expect(backendOf(parseRunbook('faces.yaml', onAws('mailbox: arn:tg/mailbox')).targets).frontedBy).toBe('alb')
    expect(backendOf(loadRunbook('outlook-staged-return-haproxy').targets).frontedBy).toBeUndefined()
  })
})
