import {InputError} from '../errors.js'
import type {Scenario} from '../sim/scenario/schema.js'
import type {DrillTarget} from './report.js'

/**
 * A drill predicted from another scenario's model of the pool: a calibrated scenario, say, whose
 * servers, checks and clients were fitted to an earlier run. The real side runs the drilled
 * scenario as it is (that is the truth the prediction is judged against); the prediction takes
 * from the drilled scenario only what the experiment sets: its demand, faults, timeline, DNS and
 * restrictions, and the runbook. Everything about the pool, its load balancer and its clients
 * comes from the model, with the model's first setup (a calibrated scenario has one:
 * as-configured), so nothing of the truth leaks into the prediction.
 */
export function predictedFromModel(target: DrillTarget, model: Scenario, modelName: string): DrillTarget {
  const drilled = target.scenario
  const names = new Set(model.pools.map((p) => p.name))
  const missing = drilled.pools.map((p) => p.name).filter((n) => !names.has(n))
  if (missing.length > 0)
    throw new InputError(
      `--model: ${modelName} has no pool ${missing[0]} (it has ${[...names].join(', ')}); a model predicts a drill of the same pools: calibrate with --pool ${missing[0]}`,
    )
  const setupName = Object.keys(model.setups)[0]
  if (setupName === undefined) throw new InputError(`--model: ${modelName} has no setup to predict with`)
  const scenario: Scenario = {
    ...drilled,
    model: model.model,
    tick: Math.min(drilled.tick, model.tick),
    pools: drilled.pools.map((p) => model.pools.find((m) => m.name === p.name)!),
    healthCheck: model.healthCheck,
    clients: model.clients,
    setups: model.setups,
  }
  return {...target, scenario, setup: {name: setupName, policy: model.setups[setupName]}}
}
