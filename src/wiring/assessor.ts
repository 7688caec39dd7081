import type {Runbook} from '../loader/runbook.js'
import type {PoolAssessor} from '../ports/pool-readings.js'
import {backendOf} from '../runbook/targets.js'
import {resolveScenarioRef} from './scenario-ref.js'

/**
 * The assessor a runbook's `assess` step uses, live and in rehearsal alike: its scenario named as
 * the runbook names it (a file beside the runbook, or a built-in), the quick assessment on this
 * thread (a step waits for it; the map is for the command). The simulator loads only when a step asks.
 */
export function scenarioAssessor(runbook: Runbook): PoolAssessor {
  return {
    async assess(ref, setupName, now) {
      const [{loadScenario, pickSetups}, {assess, familyOf}, {cellRunner}] = await Promise.all([
        import('../sim/scenario/load-scenario.js'),
        import('../assess/assess.js'),
        import('../sweep/workers.js'),
      ])
      const {scenario} = loadScenario(resolveScenarioRef(ref, runbook.file), {}, 'assess step scenario')
      const setup = pickSetups(scenario, setupName ? [setupName] : 'all', 'assess step setup')[0]
      const family = familyOf(scenario, backendOf(runbook.targets).frontedBy)
      const runner = cellRunner({scenario, setups: [setup], params: []}, 1)
      try {
        const a = await assess(scenario, setup, now, {family, quick: true, runner})
        return {
          region: a.region,
          sentences: a.sentences,
          place: {
            scenario: scenario.name,
            setup: a.setup,
            now: a.state,
            out: a.out,
            region: a.region,
            stuckAboveDemand: a.stuckAboveDemand,
            stuckOut: a.stuckOut,
            capacity: a.capacity,
          },
        }
      } finally {
        await runner.close()
      }
    },
  }
}
