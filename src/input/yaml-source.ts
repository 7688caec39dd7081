import {isMap, isPair, isScalar, LineCounter, parseDocument, type Document, type Node as YamlNode} from 'yaml'
import type {z} from 'zod'
import {InputError} from '../errors.js'
import {formatPath, problemLine, type Path, type Problem, type ProblemSite} from './problems.js'

/**
 * A YAML file parsed with its positions kept, so that a schema error found in the data can be
 * reported at the file, line and column it came from.
 */
export class YamlSource implements ProblemSite {
  private constructor(
    readonly file: string,
    private readonly doc: Document,
    private readonly lines: LineCounter,
  ) {}

  /** Parses YAML text; malformed YAML is an InputError at the first problem. */
  static parse(file: string, text: string): YamlSource {
    const lines = new LineCounter()
    const doc = parseDocument(text, {lineCounter: lines, prettyErrors: false, uniqueKeys: true})
    const problem = doc.errors[0]
    if (problem) {
      const {line, col} = lines.linePos(problem.pos[0])
      const what = problem.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '')
      throw new InputError(`${file}:${line}:${col}: malformed YAML: ${what}`)
    }
    return new YamlSource(file, doc, lines)
  }

  data(): unknown {
    return this.doc.toJS()
  }

  /** `file:line:column` of the value at `path` (or of its key `keyOf`), or of its nearest ancestor that exists. */
  locate(path: Path, keyOf?: string): string {
    const {line, col} = this.lines.linePos(this.offset(path, keyOf))
    return `${this.file}:${line}:${col}`
  }

  error(problems: readonly Problem[]): InputError {
    const placed = problems.map((problem) => ({offset: this.offset(problem.path, problem.key), line: problemLine(this.locate(problem.path, problem.key), problem)}))
    // A stable sort: problems at one place keep the order they were found in.
    placed.sort((a, b) => a.offset - b.offset)
    return new InputError(placed.map((p) => p.line))
  }

  private offset(path: Path, keyOf?: string): number {
    let node = this.nodeAt(path)
    if (keyOf !== undefined && isMap(node)) {
      const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === keyOf)
      if (pair && isScalar(pair.key)) node = pair.key as YamlNode
    }
    return node?.range?.[0] ?? 0
  }

  private nodeAt(path: Path): YamlNode | undefined {
    for (let depth = path.length; depth >= 0; depth--) {
      const node = depth === 0 ? this.doc.contents : this.doc.getIn(path.slice(0, depth) as unknown[], true)
      if (node && typeof node === 'object' && 'range' in node) return node as YamlNode
    }
    return undefined
  }
}

export function valueAt(data: unknown, path: Path): unknown {
  let node = data
  for (const key of path) node = node && typeof node === 'object' ? (node as Record<PropertyKey, unknown>)[key] : undefined
  return node
}

/** One readable sentence for a schema issue: what was expected and what was found. */
export function describeIssue(issue: z.core.$ZodIssue, data?: unknown): string {
  switch (issue.code) {
    case 'invalid_union': {
      const options = (issue as {options?: unknown[]}).options
      if (!options) return issue.message
      const got = valueAt(data, issue.path)
      return `expected one of ${options.join(', ')}${got === undefined ? '' : `, got ${JSON.stringify(got)}`}`
    }
    case 'unrecognized_keys': {
      return `unknown key ${issue.keys.map((k) => `"${k}"`).join(', ')}`
    }
    case 'too_small': {
      const bound = Number(issue.minimum)
      if (issue.origin === 'array') return `expected at least ${bound} item${bound === 1 ? '' : 's'}`
      return `expected a number ${issue.inclusive ? '>=' : '>'} ${bound}`
    }
    case 'too_big': {
      if (issue.origin === 'array') return `expected at most ${Number(issue.maximum)} items`
      return `expected a number ${issue.inclusive ? '<=' : '<'} ${Number(issue.maximum)}`
    }
    default: {
      return issue.message.replace(/^Invalid input: /, '')
    }
  }
}

/**
 * Validates data from a YAML source against a schema. The first problem becomes an InputError
 * naming file:line:column and the field, or the flag when an override put the value there.
 */
export function validate<S extends z.ZodType>(
  schema: S,
  data: unknown,
  source: YamlSource,
  flagFor: (path: Path) => string | undefined = () => undefined,
): z.output<S> {
  const result = schema.safeParse(data)
  if (result.success) return result.data
  const issue = result.error.issues[0]
  const path = issue.path
  const key = issue.code === 'unrecognized_keys' ? String(issue.keys[0]) : undefined
  const field = formatPath(key === undefined ? path : [...path, key])
  const flag = flagFor(path)
  const where = flag ?? source.locate(path, key)
  throw new InputError(`${where}: ${field === '' ? '' : `${field}: `}${describeIssue(issue, data)}`)
}
