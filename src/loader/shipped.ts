import {join} from 'node:path'
import {builtinNames, resolveBuiltinOrFile, type Builtins} from '../input/builtin.js'
import {packageRoot} from '../package-root.js'
import type {Runbook} from './runbook.js'
import {loadRunbookFile} from './load-runbook.js'

/** The runbooks that ship with sluice, in `runbooks/` at the package root, so an installed sluice can run them by name. */
const shippedRunbooks: Builtins = {dir: join(packageRoot, 'runbooks'), kind: 'runbook'}

/**
 * Loads a runbook by shipped name or file path. A shipped one is loaded from its absolute path,
 * so its rehearsal scenario resolves beside it and a journal records where it really is.
 */
export function loadRunbook(ref: string): Runbook {
  return loadRunbookFile(resolveBuiltinOrFile(ref, shippedRunbooks, 'RUNBOOK'))
}

export function shippedRunbookNames(): string[] {
  return builtinNames(shippedRunbooks)
}

export interface ShippedRunbook {
  name: string
  description: string
  /** The scenario `run NAME --dry-run` rehearses against. */
  scenario?: string
  file: string
}

/** Every shipped runbook, loaded and checked, so the list shows only what would run. */
export function listShippedRunbooks(): ShippedRunbook[] {
  return shippedRunbookNames().map((ref) => {
    const runbook = loadRunbook(ref)
    return {name: ref, description: runbook.description, scenario: runbook.rehearsal?.scenario, file: runbook.file}
  })
}
