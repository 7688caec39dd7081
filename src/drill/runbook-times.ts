import type {Step} from '../actions/registry.js'
import type {Runbook} from '../loader/runbook.js'
import {typePath} from './load-generator.js'

/**
 * A runbook's restrictions on the drill's traffic: the load generator sends each traffic type to
 * a path of its own (typePath), not to the paths the runbook names for production, so a restrict
 * step turns its type away by that path. Everything else about the step is the runbook's.
 */
export function drillRestrictions(runbook: Runbook): Runbook {
  return {...runbook, steps: runbook.steps.map((step): Step => (step.action === 'restrict' ? {...step, paths: [typePath(step.type)], headers: {}} : step))}
}

/**
 * A runbook on the drill's HAProxy: its socket and map files are the drill's, so the plan, the
 * labels, the locks and the journal name what the drill changes, not the production paths the
 * runbook was written for.
 */
export function onDrillHaproxy(runbook: Runbook, haproxy: {socket: string; restrictMap: string; rampMap?: string}): Runbook {
  const written = runbook.targets.haproxy
  if (!written) return runbook
  return {...runbook, targets: {...runbook.targets, haproxy: {...written, ...haproxy, rampMap: haproxy.rampMap}}}
}
