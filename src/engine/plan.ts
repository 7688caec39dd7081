import type {LiveView} from '../actions/action.js'
import {actionOf} from '../actions/registry.js'
import type {PlannedStep} from '../ports/io.js'
import type {Runbook} from '../loader/runbook.js'

/**
 * The plan a person sees before anything runs: one entry per step from `fromStep` (a resume shows
 * only what is left), with what it will do. There is one plan; a live run passes what preflight
 * read, and each step's lines say it in live numbers, chained: each step is planned from the state
 * the steps before it will have left, and says where that state is not what the step expects.
 */
export function planRunbook(runbook: Runbook, live?: LiveView, fromStep = 0): PlannedStep[] {
  let now = live
  const plan: PlannedStep[] = []
  for (const step of runbook.steps.slice(fromStep)) {
    const action = actionOf(step)
    const drift = now && action.expects ? action.expects(step, {targets: runbook.targets, live: now}) : []
    plan.push({
      index: step.index,
      action: step.action,
      title: step.title,
      details: action.plan(step, {targets: runbook.targets, live: now}),
      ...(drift.length > 0 ? {drift} : {}),
    })
    if (now && action.project) now = action.project(step, now)
  }
  return plan
}
