import {describe, expect, it} from 'vitest'
import {inProcess as sluice} from '../helpers/command.js'
import {cfg, registered, ruleCount, useLiveFixture, type Fixture} from './live-fixture.js'
import {liveCopy} from './live-runbook.js'
import {putAlbMetrics, seedLoadBalancer, targetGroupDimension, uniqueName} from './seed.js'

let fx: Fixture
useLiveFixture((current) => (fx = current))

describe('more shipped runbooks live, and what status and iam-policy say', () => {
  it('thread-hold-recovery: the restriction goes on, every target is restarted in batches of 5 within the budget, and status reads it all back', async () => {
    const name = uniqueName('cafe')
    const lb = await seedLoadBalancer(cfg, {name, targets: 30})
    const targets = {...fx.targets, targetGroupArn: lb.targetGroupArn, listenerArn: lb.listenerArn, loadBalancer: lb.loadBalancerDimension}
    const now = Date.now()
    await putAlbMetrics(cfg, {
      loadBalancer: lb.loadBalancerDimension,
      targetGroup: targetGroupDimension(lb.targetGroupArn),
      points: Array.from({length: 16}, (_, i) => ({at: new Date(now + (i - 5) * 60_000), requests: 60_000, target5xx: 0, elb5xx: 0})),
    })
    const file = liveCopy('runbooks/thread-hold-recovery.yaml', targets, fx.dir, fx.hook)
    const result = await sluice(['run', file, '--yes'], {env: fx.env})
    expect(result.code, result.stderr + result.stdout).toBe(0)
    const batches = fx.proxy.of('DeregisterTargets').map((c) => [...c.body.matchAll(/Targets\.member\.\d+\.Id=/g)].length)
    expect(batches).toEqual([5, 5, 5, 5, 5, 5])
    expect(await registered(lb.targetGroupArn)).toHaveLength(30)
    // The headroom guard read the request rate before each batch.
    expect(fx.proxy.count('GetMetricData')).toBeGreaterThanOrEqual(6)
    // The restriction stays on (the runbook does not lift it), and status finds it by its tag.
    expect(await ruleCount(lb.listenerArn)).toBe(1)
    const status = await sluice(['status', file, '--json'], {env: fx.env})
    expect(status.code, status.stderr).toBe(0)
    const s = JSON.parse(status.stdout)
    expect(s.targetGroups).toEqual([expect.objectContaining({pool: 'cafe', total: 30, counts: {healthy: 30}})])
    expect(s.restrictions.rules).toEqual([{type: 'decommissioned-lookup', paths: ['/routing/lookup/legacy-*'], headers: {}, retryAfterSeconds: 600}])
    expect(s.freeze).toBeNull()
  }, 120_000)
})
