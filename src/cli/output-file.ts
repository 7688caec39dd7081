import {writeFileSync} from 'node:fs'
import {InputError} from '../errors.js'

/**
 * Writes a report or runbook a command has already built, so that only a failed write is
 * reported as one: bad input naming the flag and the file, with the system's reason.
 */
export function writeOutput(flag: string, file: string, content: string): void {
  try {
    writeFileSync(file, content)
  } catch (error) {
    throw new InputError(`${flag}: cannot write ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`)
  }
}
