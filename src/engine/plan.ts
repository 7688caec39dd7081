import type {LiveView} from '../actions/action.js'
import {actionOf} from '../actions/registry.js'
import type {PlannedStep} from '../ports/io.js'
import type {Runbook} from '../runbook/runbook.js'

/**
 * The plan a person sees before anything runs: one entry per step, with what it will do. There is
 * one plan; a live run passes what preflight read, and each step's lines say it in live numbers.
 */
export function planRunbook(runbook: Runbook, live?: LiveView): PlannedStep[] {
  return runbook.steps.map((step) => ({index: step.index, action: step.action, title: step.title, details: actionOf(step).plan(step, {runbook, live})}))
}
