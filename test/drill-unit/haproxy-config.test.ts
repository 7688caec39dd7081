import {describe, expect, it} from 'vitest'
import {drillHaproxy, drillMaps} from '../../src/drill/haproxy-config.js'
import type {FleetInfo} from '../../src/drill/fleet.js'
import {restrictionConfig} from '../../src/haproxy/rules.js'
import {rampConfig} from '../../src/haproxy/weights.js'
import {fleetConfig, loadScenario, pickSetups} from '../../src/sim/scenario/load-scenario.js'

const ports = Array.from({length: 20}, (_, i) => 41000 + 3 * i)
const fleet: FleetInfo = {admin: 1, pools: [{name: 'mailbox', ports}]}
const dir = '/tmp/sluice-haproxy-test'

/** The drill's HAProxy for one setup of a shipped scenario. */
function configFor(name: string, setup: string, timeScale = 0.25) {
  const {scenario} = loadScenario(name)
  const [picked] = pickSetups(scenario, [setup])
  const sim = fleetConfig(scenario, picked.policy)
  const haproxy = drillHaproxy(scenario, sim.healthCheck, sim.policy.slowStart, fleet, 8123, {rateScale: 0.1, timeScale})
  return {haproxy, text: haproxy.config(dir), lines: haproxy.config(dir).split('\n')}
}

describe('drillHaproxy', () => {
  it("gives each of the fleet's servers a line, checked as the setup checks, times the time scale", () => {
    const {text, lines, haproxy} = configFor('outlook-2026-haproxy', 'observe-layer7')
    const servers = lines.filter((l) => /^\s*server /.test(l)).map((l) => l.trim())
    expect(servers).toEqual(ports.map((p, i) => `server mailbox-${i} 127.0.0.1:${p}`))
    const defaults = lines.filter((l) => /default-server/.test(l))
    expect(defaults).toHaveLength(1)
    const check = defaults[0]
    // inter 2 s × 0.25; fastinter and downinter default to inter.
    expect(check).toMatch(/\binter 500ms\b/)
    expect(check).toMatch(/\bfastinter 500ms\b/)
    expect(check).toMatch(/\bdowninter 500ms\b/)
    expect(check).toMatch(/\bfall 3\b/)
    expect(check).toMatch(/\brise 2\b/)
    expect(check).toMatch(/\bobserve layer7 error-limit 10 on-error mark-down\b/)
    expect(check).not.toMatch(/slowstart/)
    expect(text).toContain('option httpchk GET /health')
    expect(text).toContain(`bind 127.0.0.1:8123`)
    expect(text).toContain(`stats socket ${dir}/admin.sock mode 600 level admin`)
    // One pool: no ramp, everything to it, behind the restriction snippet.
    expect(haproxy.ramp).toBeNull()
    expect(text).toContain('  default_backend mailbox')
    expect(text).toContain(restrictionConfig(`${dir}/${drillMaps.restrict}`))
    expect(haproxy.files).toEqual({[drillMaps.restrict]: ''})
    expect(haproxy.backends).toEqual({mailbox: 'mailbox'})
    expect(haproxy.slowStart).toEqual({mailbox: 0})
  })

  it('leaves layer-7 observation out for a setup that checks only', () => {
    const {lines} = configFor('outlook-2026-haproxy', 'no-guard')
    const check = lines.find((l) => /default-server/.test(l))!
    expect(check).toMatch(/\binter 500ms\b/)
    expect(check).not.toMatch(/observe|error-limit|on-error/)
  })

  it('follows the time scale into the check interval', () => {
    const {lines} = configFor('outlook-2026-haproxy', 'no-guard', 0.1)
    expect(lines.find((l) => /default-server/.test(l))).toMatch(/\binter 200ms\b/)
  })

  it('gives slowstart only to a setup that sets it', () => {
    const slow = configFor('outlook-recovery-haproxy', 'slowstart-60')
    // 60 s × 0.25
    expect(slow.lines.find((l) => /default-server/.test(l))).toMatch(/\bslowstart 15000ms\b/)
    expect(slow.haproxy.slowStart).toEqual({mailbox: 15})
    const none = configFor('outlook-recovery-haproxy', 'no-slowstart')
    expect(none.lines.find((l) => /default-server/.test(l))).not.toMatch(/slowstart/)
  })

  it('ramps between two pools with a map of percents, and parks traffic on a sorry backend that answers 503', () => {
    const {haproxy, text, lines} = configFor('outlook-recovery-haproxy', 'slowstart-60')
    // All of the traffic on mailbox; the lesser share (maintenance) is the ramped one.
    expect(haproxy.ramp).toEqual(['maintenance', 'mailbox'])
    expect(haproxy.files[drillMaps.ramp]).toBe('mailbox 100\nmaintenance 0\n')
    expect(haproxy.files[drillMaps.restrict]).toBe('')
    expect(text).toContain(rampConfig(`${dir}/${drillMaps.ramp}`, 'maintenance', 'mailbox'))
    expect(text).not.toContain('default_backend')
    expect(haproxy.backends).toEqual({mailbox: 'mailbox', maintenance: 'maintenance'})
    // The sorry backend has no servers: only the 503, with Retry-After 60 s × 0.25.
    const sorry = lines.slice(lines.indexOf('backend maintenance') + 1)
    const nextBackend = sorry.findIndex((l) => l.startsWith('backend '))
    const body = nextBackend < 0 ? sorry : sorry.slice(0, nextBackend)
    expect(body.filter((l) => l.trim() !== '')).toEqual(['  http-request return status 503 content-type text/plain string "maintenance" hdr Retry-After 15'])
    expect(lines.filter((l) => /^\s*server /.test(l))).toHaveLength(20)
  })

  it("rounds the sorry backend's Retry-After to whole seconds, at least 1", () => {
    expect(configFor('outlook-recovery-haproxy', 'no-slowstart', 0.1).text).toContain('hdr Retry-After 6\n')
    expect(configFor('outlook-recovery-haproxy', 'no-slowstart', 0.005).text).toContain('hdr Retry-After 1\n')
  })
})
