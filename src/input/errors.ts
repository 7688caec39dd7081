/** Exit codes, one table for every command (DESIGN.md). */
export const ExitCode = {
  ok: 0,
  failed: 1,
  badInput: 2,
  gateFailed: 3,
  refused: 4,
  interrupted: 130,
} as const

export type ExitCodeValue = (typeof ExitCode)[keyof typeof ExitCode]

/**
 * Input the user can fix: a flag, a scenario or a runbook. Its message is one line that says
 * where (file:line:column or --flag) and what was expected; it never comes with a stack trace.
 */
export class InputError extends Error {
  readonly exit = ExitCode.badInput

  constructor(message: string) {
    super(message)
    this.name = 'InputError'
  }
}
