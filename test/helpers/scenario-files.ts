import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {InputError} from '../../src/errors.js'

/** Writes scenario files into a temporary directory of their own. */
export function scenarioWriter(prefix: string): (name: string, text: string) => string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  return (name, text) => {
    const file = join(dir, name)
    writeFileSync(file, text)
    return file
  }
}

/** One pool of four servers and its demand: most scenario tests vary only what comes after them. */
export const tinyFleet = `pools:
  - name: web
    servers: 4
    capacity: 50
demand:
  rps: 100
`

/** The InputError `fn` throws; anything else thrown, or nothing, fails the test. */
export function inputErrorOf(fn: () => unknown): InputError {
  try {
    fn()
  } catch (error) {
    if (error instanceof InputError) return error
    throw error
  }
  throw new Error('expected an InputError, nothing was thrown')
}
