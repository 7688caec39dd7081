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
    // A step that changes the live system with nothing read for it (a weighted split between target
    // groups): the plan says so rather than count it among the steps that find what they expect.
    const unread =
      now && action.changesLive && !action.expects
        ? [`not read: a live plan does not read what this ${step.action} step changes; the step reads it when it starts`]
        : []
    plan.push({
      index: step.index,
      action: step.action,
      title: step.title,
      details: [...action.plan(step, {targets: runbook.targets, live: now}), ...(live?.countsNow?.has(step.index) ? [live.countsNow.get(step.index)!] : [])],
      ...(drift.length > 0 ? {drift} : {}),
      ...(unread.length > 0 ? {unread} : {}),
    })
    if (now && action.project) now = action.project(step, now)
  }
  return plan
}
