import {FailedError} from '../../errors.js'
import {redactSecrets} from '../../input/secrets.js'
import type {Clock, HookResult, SsmSpec} from '../../ports/control-plane.js'
import {AwsCallError, awsCall} from '../errors.js'
import type {SsmCalls} from '../sdk.js'

/** Seconds between looks at an invocation: Run Command reports its status within seconds, and its throttle is 20 calls a second. */
const pollSeconds = 2

/** How an invocation can end; any other status (Pending, InProgress, Delayed, Cancelling) is still under way. */
const ended = new Set(['Success', 'Failed', 'Cancelled', 'TimedOut'])

/** Characters of a command's output kept in the journal: the end of it, where a script says how it went. */
const outputTail = 400

/** The end of an output, on one line, with the values of secret-looking variables blanked. */
function tail(text: string | undefined): string {
  const flat = redactSecrets((text ?? '').trim()).replace(/\s*\n\s*/g, ' ⏎ ')
  return flat.length > outputTail ? `…${flat.slice(-outputTail)}` : flat
}

/**
 * SSM Run Command on a target's EC2 instance, as SSM Automation's aws:runCommand step does it:
 * send the document with its parameters to that one instance, then wait for the invocation to end
 * (Success, Failed, Cancelled, TimedOut), within the hook's timeout. At the deadline the command
 * is cancelled and the target fails: a restart still running is not a restart that worked.
 *
 * Each command carries a comment naming the run, step and kind, so a run resumed after a kill
 * finds the command it had sent (`finish`) and waits for it, rather than sending it again.
 */
export class SsmRunCommand {
  constructor(
    private readonly ssm: SsmCalls,
    private readonly clock: Clock,
  ) {}

  async run(spec: SsmSpec, instanceId: string, signal?: AbortSignal): Promise<HookResult> {
    const started = this.clock.now()
    const sent = await awsCall(
      'SSM',
      'SendCommand',
      `instance ${instanceId} (document ${spec.document})`,
      (abortSignal) =>
        this.ssm.sendCommand(
          {
            InstanceIds: [instanceId],
            DocumentName: spec.document,
            Parameters: spec.parameters,
            Comment: spec.comment,
            // How long SSM tries to deliver it: a stopped or unreachable agent fails the target at its deadline, not an hour later.
            TimeoutSeconds: Math.max(30, Math.ceil(spec.timeoutSeconds)),
          },
          abortSignal,
        ),
      signal,
    )
    const commandId = sent.Command?.CommandId
    if (!commandId) throw new FailedError(`SSM SendCommand to ${instanceId} gave no command id`)
    return this.await(spec, instanceId, commandId, started, signal)
  }

  /**
   * The command a run that died sent to this instance, found by its comment among those sent
   * since its intent was journalled, and waited on; sent now only when there is none (the run
   * died before it was sent).
   */
  async finish(spec: SsmSpec, instanceId: string, since: Date, signal?: AbortSignal): Promise<HookResult> {
    const listed = await awsCall(
      'SSM',
      'ListCommands',
      `instance ${instanceId}`,
      (abortSignal) =>
        // A minute before the intent: the two clocks need not agree to the second.
        this.ssm.listCommands({InstanceId: instanceId, Filters: [{key: 'InvokedAfter', value: new Date(since.getTime() - 60_000).toISOString()}]}, abortSignal),
      signal,
    )
    const sent = (listed.Commands ?? []).find((c) => c.Comment === spec.comment && c.DocumentName === spec.document)
    if (!sent?.CommandId) return this.run(spec, instanceId, signal)
    const result = await this.await(spec, instanceId, sent.CommandId, this.clock.now(), signal, true)
    return {...result, note: `sent before the resume; ${result.note}`}
  }

  /** `resumed`: the command was sent by a run that died, so how long it took is not known here, only how long this run waited. */
  private async await(spec: SsmSpec, instanceId: string, commandId: string, started: number, signal?: AbortSignal, resumed = false): Promise<HookResult> {
    const deadline = started + spec.timeoutSeconds
    let status = 'Pending'
    for (;;) {
      try {
        const invocation = await awsCall(
          'SSM',
          'GetCommandInvocation',
          `command ${commandId} on instance ${instanceId}`,
          (abortSignal) => this.ssm.getCommandInvocation({CommandId: commandId, InstanceId: instanceId}, abortSignal),
          signal,
        )
        status = invocation.Status ?? 'Pending'
        if (ended.has(status)) {
          const took = Math.round(this.clock.now() - started)
          const code = invocation.ResponseCode === undefined || invocation.ResponseCode === -1 ? '' : `, exit ${invocation.ResponseCode}`
          const said =
            status === 'Success' ? tail(invocation.StandardOutputContent) : tail(invocation.StandardErrorContent) || tail(invocation.StandardOutputContent)
          const summary = `SSM command ${commandId} (${spec.document}) on ${instanceId}: ${status}${code} ${resumed ? `(waited ${took} s for it)` : `after ${took} s`}${said ? `: ${said}` : ''}`
          if (status !== 'Success') throw new FailedError(summary)
          return {note: summary}
        }
      } catch (error) {
        // Right after SendCommand the invocation may not be listed yet: that is not a failure.
        if (!(error instanceof AwsCallError && error.code === 'InvocationDoesNotExist')) throw error
      }
      if (this.clock.now() >= deadline) {
        await awsCall(
          'SSM',
          'CancelCommand',
          `command ${commandId} on instance ${instanceId}`,
          (abortSignal) => this.ssm.cancelCommand({CommandId: commandId, InstanceIds: [instanceId]}, abortSignal),
          signal,
        ).catch(() => undefined)
        throw new FailedError(
          `SSM command ${commandId} (${spec.document}) on ${instanceId} was still ${status} after ${Math.round(spec.timeoutSeconds)} s, the hook's timeout; it was cancelled`,
        )
      }
      await this.clock.sleep(Math.min(pollSeconds, Math.max(0.1, deadline - this.clock.now())), signal)
    }
  }
}
