import {approveSchema, type ApproveStep} from './schema.js'
import {formatMetric} from '../../format.js'
import type {ActionContext, ActionDefinition, StepOutcome} from '../action.js'

/**
 * How long a live approval waits for an answer when its step gives no timeout: long enough for a
 * person to be found in an outage, short enough that a run nobody answers does not hold its locks
 * all night. The step's own `timeout` overrides it (within a runbook's bounds).
 */
export const defaultApprovalTimeout = 3600

/**
 * Asks for approval to go on, showing what has been done and what the metrics say now.
 *
 * Live, it is answered by the person at the terminal, by `sluice promote RUN` from any terminal,
 * or in advance by `--approve STEP`; --yes confirms the plan only and never answers it. With no
 * answer within the step's timeout the run holds there, resumable (refused, exit 4). A rehearsal
 * changes nothing, so there --yes answers it as it answers the plan's confirmation.
 */
export const approve: ActionDefinition<ApproveStep, typeof approveSchema> = {
  action: 'approve',
  schema: approveSchema,
  defaultOnFailure: 'abort',
  title: (step) => `Approval: ${step.message}`,
  plan: (step) => [`ask: ${step.message}`],
  changesLive: false,
  // What an approval shows the person deciding.
  metricsRead: () => ['error-rate', 'request-rate'],
  endsAtTimeout: true,
  locks: () => [],
  iam: () => [],
  mutations: {},
  async run(step, ctx) {
    if (ctx.preApproved) return {status: 'done', message: `approved by --approve: ${step.message}`}
    if (!ctx.controls) {
      const yes = await ctx.io.confirm(step.message, await approvalContext(ctx, ctx.signal))
      if (!yes) return {status: 'refused', message: `not approved: ${step.message}`}
      return {status: 'done', message: `approved: ${step.message}`}
    }
    return awaitApproval(step, ctx)
  },
}

/** What the person deciding sees: what has been done, and what the metrics say now where there are any. */
async function approvalContext(ctx: ActionContext, signal: AbortSignal): Promise<string[]> {
  const context = ['Done so far:', ...(ctx.history.length > 0 ? ctx.history.map((h) => `  ✓ ${h}`) : ['  (nothing yet)'])]
  const metrics = ctx.control.metrics
  if (metrics) {
    const [errors, rate] = await Promise.all([metrics.read('error-rate', 60, undefined, signal), metrics.read('request-rate', 60, undefined, signal)])
    context.push(`Now: error rate ${formatMetric(errors.value, '%')}, ${formatMetric(rate.value, 'rps')} over the last 60 s`)
  }
  return context
}

/**
 * A live approval: the first of the person here, a promote from anywhere, or the timeout. It
 * listens for a promote from its first instant: reading the metrics it shows (a minute of
 * HAProxy's counters) goes on beside it, and a promote that arrives meanwhile approves at once.
 */
async function awaitApproval(step: ApproveStep, ctx: ActionContext): Promise<StepOutcome> {
  const controls = ctx.controls!
  const limit = step.timeout ?? defaultApprovalTimeout
  const clock = ctx.control.clock
  const settled = new AbortController()
  const onStop = () => settled.abort()
  ctx.signal.addEventListener('abort', onStop, {once: true})
  // An approval, not a bake: a `promote --full` sent before it asks does not answer it.
  const promote = controls.listenForPromote(() => `approved step ${step.index + 1} (Approval: ${step.message})`, settled.signal, 'approval')
  ctx.progress(`waiting for approval up to ${limit} s: answer here, or run \`sluice promote ${controls.runId}\` from any terminal`)
  try {
    const answers: Array<Promise<StepOutcome | null>> = [
      promote.promoted.then((who) => (who ? {status: 'done', message: `approved by ${who.operator} on ${who.host} (sluice promote): ${step.message}`} : null)),
      clock.sleep(limit, settled.signal).then(() => null),
    ]
    const io = ctx.io
    if (io.ask) {
      answers.push(
        approvalContext(ctx, settled.signal)
          .catch((error: unknown) => [`Now: the metrics could not be read (${(error as Error).message})`])
          .then((context) => (settled.signal.aborted ? null : io.ask!(step.message, context, settled.signal)))
          .then((yes) => {
            if (yes === null) return new Promise<null>(() => undefined)
            return yes ? {status: 'done', message: `approved: ${step.message}`} : {status: 'refused', message: `not approved: ${step.message}`}
          }),
      )
    }
    const answer = await Promise.race(answers)
    if (answer) return answer
    // No answer and no stop: the timeout ended it. (Not judged by the clock: a timer on a busy
    // machine fires by the event loop's time, which may lag the clock by more than a millisecond.)
    if (!ctx.signal.aborted)
      return {
        status: 'refused',
        message: `no approval within ${limit} s: ${step.message}; holding here with nothing more changed (\`sluice resume ${controls.runId}\` asks again)`,
      }
    return {status: 'interrupted', message: `interrupted while waiting for approval: ${step.message}`}
  } finally {
    settled.abort()
    ctx.signal.removeEventListener('abort', onStop)
  }
}
