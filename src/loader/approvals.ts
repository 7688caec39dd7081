import type {ApproveStep} from '../actions/approve/schema.js'
import {InputError} from '../errors.js'
import type {Runbook} from './runbook.js'

/**
 * The steps `--approve STEP` names, by their number in the plan (1-based) or their name (the
 * step's `name`, or its title): each must be an approve step, else bad input naming the flag.
 */
export function approvedSteps(runbook: Runbook, values: string[] = []): number[] {
  const approvals = runbook.steps.filter((s): s is ApproveStep => s.action === 'approve')
  const list = approvals.length > 0 ? approvals.map((s) => `${s.index + 1} (${s.title})`).join(', ') : 'none'
  return values.map((value) => {
    const step = /^\d+$/.test(value) ? runbook.steps[Number(value) - 1] : runbook.steps.find((s) => s.title === value || ('name' in s && s.name === value))
    if (!step)
      throw new InputError(
        `--approve ${value}: ${runbook.name} has no step ${/^\d+$/.test(value) ? 'numbered' : 'named'} ${value}; its approve steps are ${list}`,
      )
    if (step.action !== 'approve')
      throw new InputError(
        `--approve ${value}: step ${step.index + 1} (${step.title}) is a ${step.action} step, not an approve step; the approve steps are ${list}`,
      )
    return step.index
  })
}
