import {existsSync} from 'node:fs'
import {dirname, isAbsolute, join} from 'node:path'

/** A scenario named in a runbook is a built-in name or a file relative to the runbook. */
export function resolveScenarioRef(ref: string, runbookFile: string): string {
  const looksLikeFile = ref.includes('/') || ref.endsWith('.yaml') || ref.endsWith('.yml')
  if (!looksLikeFile || isAbsolute(ref)) return ref
  const beside = join(dirname(runbookFile), ref)
  return existsSync(beside) ? beside : ref
}
