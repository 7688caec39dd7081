import {existsSync, readFileSync} from 'node:fs'
import {extname} from 'node:path'
import {parse} from 'yaml'
import {InputError} from '../errors.js'
import {rehearsalScenario} from './rehearsal.js'
import {loadRunbook, shippedRunbookNames} from '../loader/shipped.js'
import {builtinScenarioNames, loadScenario, pickSetups} from '../sim/scenario/load-scenario.js'
import type {DrillTarget} from '../drill/report.js'

/**
 * What `sluice drill REF` names: a shipped runbook or scenario by name, or a file, told apart by
 * whether it has steps. A runbook must steer HAProxy (targets.haproxy): a drill runs it on
 * HAProxy, and one written for AWS may ask for what HAProxy cannot do at runtime.
 */
export function loadDrillTarget(ref: string, setup: string | undefined): DrillTarget {
  if (isRunbook(ref)) {
    const runbook = loadRunbook(ref)
    if (!runbook.targets.haproxy)
      throw new InputError(
        `${runbook.locate(['targets'])}: a drill runs a runbook on HAProxy, and this one steers ${Object.keys(runbook.targets).join(', ')}; give it targets.haproxy (runbooks/outlook-staged-return-haproxy.yaml shows how)`,
      )
    const picked = rehearsalScenario(runbook, {pace: null, ...(setup === undefined ? {} : {setup})})
    return {kind: 'runbook', runbook, scenario: picked.scenario, setup: picked.setup}
  }
  const {scenario} = loadScenario(ref, {}, 'RUNBOOK|SCENARIO')
  const [picked] = setup === undefined ? pickSetups(scenario, 'all').slice(0, 1) : pickSetups(scenario, [setup])
  return {kind: 'scenario', scenario, setup: picked}
}

function isRunbook(ref: string): boolean {
  const looksLikeFile = ref.includes('/') || ['.yaml', '.yml'].includes(extname(ref))
  if (!looksLikeFile) {
    if (shippedRunbookNames().includes(ref)) return true
    if (builtinScenarioNames().includes(ref) || !existsSync(ref)) return false
  }
  if (!existsSync(ref)) return false
  try {
    const data: unknown = parse(readFileSync(ref, 'utf8'))
    return typeof data === 'object' && data !== null && 'steps' in data
  } catch {
    // Not YAML: the scenario loader reports it at its line and column.
    return false
  }
}
