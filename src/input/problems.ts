import {InputError} from '../errors.js'

export type Path = ReadonlyArray<PropertyKey>

/**
 * One thing wrong with an input, said independently of where the input came from, so a file can
 * point at its line and column and the command line at the flag that supplied the value.
 */
export interface Problem {
  path: Path
  /** Set when the problem is a key itself (an unknown key): it is reported at the key, not at its object. */
  key?: string
  message: string
}

/** Where an input's problems are reported: a file with positions, or the flags behind a value. */
export interface ProblemSite {
  locate(path: Path, key?: string): string
  /** One InputError carrying every problem, a line each, in the order a reader meets them. */
  error(problems: readonly Problem[]): InputError
}

/** `where: field.path: message`, the one shape every input problem is printed in. */
export function problemLine(where: string, problem: Problem): string {
  const field = formatPath(problem.path)
  return `${where}: ${field === '' ? '' : `${field}: `}${problem.message}`
}

/** `pools[0].capacity` from ['pools', 0, 'capacity']. */
export function formatPath(path: Path): string {
  let out = ''
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`
    else out += out === '' ? String(part) : `.${String(part)}`
  }
  return out
}

/** Problems reported against the flags that supplied each value, in the order they were found. */
export function flagSite(flagFor: (path: Path) => string | undefined): ProblemSite {
  const locate = (path: Path): string => flagFor(path) ?? 'command line'
  return {locate, error: (problems) => new InputError(problems.map((p) => problemLine(locate(p.path), p)))}
}
