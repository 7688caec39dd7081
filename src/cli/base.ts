import {Command, Errors, Flags} from '@oclif/core'
import {InputError, SluiceError, type Outcome} from '../errors.js'
import {closest} from '../input/closest.js'
import {exitCodeOf, exitCodes} from './exit-codes.js'
import {relationProblems} from './flag-relations.js'
import {outputWidth} from './output-width.js'
import {storesAfresh} from './state-store.js'
import {watchForLostTerminal} from './stop-signals.js'

/**
 * The base of every sluice command: `--json` on, one exit-code table, errors as one line on
 * stderr (or a JSON object on stdout under --json) with the right exit code either way.
 */
export abstract class SluiceCommand extends Command {
  static override enableJsonFlag = true

  static override baseFlags = {
    'no-color': Flags.boolean({description: 'No colour in the output, as NO_COLOR=1 (charts keep their line patterns).', helpGroup: 'GLOBAL', default: false}),
  }

  // Read before anything draws: a chart or a progress display picks its colours from NO_COLOR.
  // And before anything writes, a closed terminal or a gone reader becomes a stop, not a crash.
  override async init(): Promise<void> {
    watchForLostTerminal()
    storesAfresh()
    if (this.argv.includes('--no-color')) process.env.NO_COLOR = '1'
    await super.init()
  }

  /** Whether human output may use colour: only on a terminal, and never when NO_COLOR is set. */
  protected get color(): boolean {
    return Boolean(process.stdout.isTTY) && !process.env.NO_COLOR && !this.jsonEnabled()
  }

  /** How wide a table on stdout may be (src/cli/output-width.ts). */
  protected get width(): number {
    return outputWidth()
  }

  /** Progress and notes go to stderr so stdout stays for results. */
  protected note(message: string): void {
    if (!this.jsonEnabled()) process.stderr.write(`${message}\n`)
  }

  /**
   * What a command that acts on live state is doing (waits, findings, where it stopped): on
   * stderr under --json too, since it is not the result and a script's log is where it is read.
   */
  protected progress(message: string): void {
    process.stderr.write(`${message}\n`)
  }

  /** How runbook output reaches the terminal: results on stdout, notes on stderr. */
  protected printer(): {log: (text: string) => void; note: (text: string) => void; color: boolean} {
    return {log: (text) => this.log(text), note: (text) => this.note(text), color: this.color}
  }

  /**
   * Ends the command with an outcome's exit code once its result is printed: set on the process
   * rather than thrown, so --json still prints the result.
   */
  protected endWith(outcome: Outcome): void {
    process.exitCode = exitCodeOf(outcome)
  }

  // @oclif/core 4 exits 1 under --json whatever exit code the error carried, and wraps long
  // messages over several lines; an operator needs the code and one greppable line.
  protected override async catch(error: Error & {oclif?: {exit?: number}}): Promise<unknown> {
    if (error instanceof Errors.ExitError) throw error
    // sluice's own errors carry their outcome; oclif's parse errors carry `oclif.exit` (2, bad input).
    const exit = error instanceof SluiceError ? exitCodeOf(error.outcome) : (error.oclif?.exit ?? exitCodes.failed.code)
    // A runbook can have several problems, and flags several broken relations (worded from their
    // declarations, src/cli/flag-relations.ts); each stays a line of its own, so each can be grepped.
    const problems = error instanceof InputError ? error.problems : relationProblems(error)
    const lines = problems ?? [this.withFlagSuggestion(oneLine(error.message), error)]
    if (this.jsonEnabled()) {
      this.logJson({error: {message: lines.join('\n'), exit, ...(problems ? {problems} : {})}})
    } else {
      for (const line of lines) process.stderr.write(`Error: ${line}\n`)
      if (process.env.DEBUG && error.stack) process.stderr.write(`${error.stack}\n`)
    }
    return this.exit(exit)
  }

  /** oclif names a mistyped flag but does not say which one was meant; this command knows its flags. */
  private withFlagSuggestion(message: string, error: Error & {flags?: unknown}): string {
    if (!/^Nonexistent flags?:/.test(message) || !Array.isArray(error.flags)) return message
    const known = [...Object.keys(this.ctor.flags ?? {}), ...Object.keys(this.ctor.baseFlags ?? {}), ...(this.ctor.enableJsonFlag ? ['json'] : [])]
    const given = error.flags as string[]
    const hints = given.flatMap((flag) => {
      const suggestion = closest(flag.replace(/^-+/, '').replace(/=.*$/, ''), known)
      if (suggestion === undefined) return []
      return [given.length === 1 ? `did you mean --${suggestion}?` : `did you mean --${suggestion} for ${flag}?`]
    })
    return hints.length === 0 ? message : `${message}; ${hints.join('; ')}`
  }
}

/** oclif's own parse errors, said on one line that names the flag or argument. */
function oneLine(message: string): string {
  // oclif prefixes a flag's own parse error with "Parsing --flag" (ours already names the flag)
  // and appends a pointer to --help; one line is what an operator can read and grep.
  const text = message
    .replace(/^Parsing (--[\w-]+)\s*\n\s*(\w)/, (_, flag: string, first: string) => `${flag}: ${first.toLowerCase()}`)
    .replace(/\n\s*See more help with --help\s*$/, '')
    .replace(/^The following errors? occurred:\s*\n\s*/, '')
  const flag = /^Missing required flag ([\w-]+)/.exec(text)
  if (flag) return `--${flag[1]}: missing; this flag is required`
  const arg = /^Missing (\d+) required args?:\s*\n\s*([\w-]+)/.exec(text)
  if (arg) return `missing the ${arg[2].toUpperCase()} argument; see --help`
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .join('; ')
}
