import type {Outcome} from '../errors.js'

/** The one exit-code table (DESIGN.md): every command ends through it, and help shows it. */
export const exitCodes = {
  completed: {code: 0, meaning: 'done'},
  failed: {code: 1, meaning: 'failed (an API or runtime error)'},
  'bad-input': {code: 2, meaning: 'bad input (flags, scenario, runbook)'},
  'gate-failed': {code: 3, meaning: 'a gate failed and the run rolled back or held'},
  held: {code: 3, meaning: 'a gate failed and the run rolled back or held'},
  refused: {code: 4, meaning: 'refused (frozen, locked, not confirmed)'},
  interrupted: {code: 130, meaning: 'interrupted'},
} as const satisfies Record<Outcome, {code: number; meaning: string}>

export type ExitCode = (typeof exitCodes)[Outcome]['code']

export function exitCodeOf(outcome: Outcome): ExitCode {
  return exitCodes[outcome].code
}

/** The table as help shows it: one line per code. */
export function exitCodeLines(): string[] {
  const byCode = new Map<number, string>()
  for (const {code, meaning} of Object.values(exitCodes)) byCode.set(code, meaning)
  return [...byCode].sort(([a], [b]) => a - b).map(([code, meaning]) => `${String(code).padEnd(4)} ${meaning}`)
}
