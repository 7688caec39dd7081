import {existsSync, readdirSync} from 'node:fs'
import {basename, extname, join} from 'node:path'
import {InputError} from '../errors.js'
import {closest} from './closest.js'

/** A folder of YAML files that ship with sluice (scenarios, runbooks), each named by its file's base name. */
export interface Builtins {
  dir: string
  /** What one of them is called in messages: `scenario`, `runbook`. */
  kind: string
}

export function builtinNames({dir}: Builtins): string[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .map((f) => basename(f, '.yaml'))
    .sort()
}

/**
 * The file a reference means: a built-in's name (no `/`, no .yaml or .yml) or a path. A built-in
 * wins over a file of the same name in the working directory, so a name means the same everywhere.
 * `where` names what gave the reference, for errors: a flag, an argument, a runbook's field.
 */
export function resolveBuiltinOrFile(ref: string, builtins: Builtins, where: string): string {
  const looksLikeFile = ref.includes('/') || ['.yaml', '.yml'].includes(extname(ref))
  if (looksLikeFile) {
    if (!existsSync(ref)) throw new InputError(`${where}: no such file ${ref}`)
    return ref
  }
  const builtin = join(builtins.dir, `${ref}.yaml`)
  if (existsSync(builtin)) return builtin
  if (existsSync(ref)) return ref
  const names = builtinNames(builtins)
  const suggestion = closest(ref, names)
  const hint = suggestion === undefined ? '' : `; did you mean ${suggestion}?`
  throw new InputError(`${where}: unknown ${builtins.kind} "${ref}"; built-in ${builtins.kind}s are ${names.join(', ')}, or give a path to a YAML file${hint}`)
}
