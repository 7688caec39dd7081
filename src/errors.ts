/**
 * How a command can end. The domain and the engine speak in outcomes; the CLI's one exit-code
 * table (src/cli/exit-codes.ts) turns them into numbers, so no other file knows an exit code.
 */
export type Outcome = 'completed' | 'failed' | 'bad-input' | 'gate-failed' | 'held' | 'refused' | 'interrupted'

/**
 * The base of every error sluice raises on purpose: a one-line message for the operator, and the
 * outcome it ends the command with. Anything else that escapes is a bug, and exits as failed.
 */
export abstract class SluiceError extends Error {
  abstract readonly outcome: Outcome

  constructor(message: string) {
    super(message)
    this.name = new.target.name
  }
}

/**
 * Input the user can fix: a flag, a scenario or a runbook. Each problem is one line that says
 * where (file:line:column or --flag) and what was expected; it never comes with a stack trace.
 * A file can carry several problems, and the operator should see them all in one pass rather
 * than fix and rerun once per problem: the message is those lines joined by newlines.
 */
export class InputError extends SluiceError {
  readonly outcome = 'bad-input'
  readonly problems: readonly string[]

  constructor(problems: string | readonly string[]) {
    const lines = typeof problems === 'string' ? [problems] : problems
    super(lines.join('\n'))
    this.problems = lines
  }
}

/** Something sluice will not do without a person: no TTY to ask, a freeze, a lock, a journal it cannot trust. */
export class RefusedError extends SluiceError {
  readonly outcome = 'refused'
}

/**
 * The system said no, or is not what the runbook says: an AWS call failed, a resource the runbook
 * names does not exist, a weight is out of range. The message names the resource.
 */
export class FailedError extends SluiceError {
  readonly outcome = 'failed'
}

/** Stopped by Ctrl-C (or SIGTERM, SIGHUP) before there was anything to report. */
export class InterruptedError extends SluiceError {
  readonly outcome = 'interrupted'
}
