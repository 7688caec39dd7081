import {closeSync, constants, fstatSync, openSync, readSync, type Stats} from 'node:fs'
import {isMap, isPair, isScalar, Lexer, LineCounter, parseDocument, visit, type Document, type Node as YamlNode} from 'yaml'
import type {z} from 'zod'
import {InputError} from '../errors.js'
import {formatPath, problemLine, type Path, type Problem, type ProblemSite} from './problems.js'

/**
 * What any YAML input file may be: runbooks and scenarios are a few kilobytes written by hand, so
 * these are far above any real one and far below what takes the parser seconds or the heap.
 */
export const fileLimits = {
  /** Bytes, checked before reading: the biggest shipped file is under 4 KiB. */
  maxBytes: 1024 * 1024,
  /** Nodes aliases may expand to: a handful of shared defaults, never a billion-laughs bomb. */
  maxAliasCount: 100,
  /** Flow collections (`[`, `{`) inside each other: the parser's work grows with the square of it. */
  maxFlowDepth: 32,
}

/**
 * The text of an input file: refused when it is bigger than any real input (before it is read)
 * or not UTF-8 (at the first bad byte). A file that cannot be read is the caller's to word.
 */
export function readInputText(file: string): string {
  const bytes = readBounded(file)
  try {
    return new TextDecoder('utf-8', {fatal: true}).decode(bytes)
  } catch {
    const bad = firstInvalidUtf8(bytes)
    const before = new TextDecoder('utf-8', {ignoreBOM: true}).decode(bytes.subarray(0, bad))
    const {line, col} = linePos(before, before.length)
    throw new InputError(`${file}:${line}:${col}: invalid UTF-8 at byte ${bad}; expected a UTF-8 text file`)
  }
}

/** readInputText, with a file that cannot be read worded as bad input given by `where` (the flag that named it). */
export function readNamedInput(file: string, where: string): string {
  try {
    return readInputText(file)
  } catch (error) {
    if (error instanceof InputError) throw error
    throw new InputError(`${where}: cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`)
  }
}

/** What a path is, when it is not a regular file: the words for a refusal. */
function kindOf(stat: Stats): string {
  if (stat.isDirectory()) return 'a directory'
  if (stat.isFIFO()) return 'a FIFO'
  if (stat.isCharacterDevice()) return 'a character device'
  if (stat.isBlockDevice()) return 'a block device'
  if (stat.isSocket()) return 'a socket'
  return 'not a regular file'
}

/**
 * A regular file's bytes, at most the limit: anything else (a device such as /dev/zero, a FIFO, a
 * socket, a directory) is refused before a byte is read, and the file is opened without blocking
 * so a FIFO with no writer cannot hang the open. At most the limit and one byte more are read,
 * whatever the size said, since a file may grow after its size was taken.
 */
function readBounded(file: string): Buffer {
  const fd = openSync(file, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0))
  try {
    const stat = fstatSync(fd)
    if (!stat.isFile()) throw new InputError(`${file}:1:1: ${kindOf(stat)}, not a regular file; expected a YAML file`)
    if (stat.size > fileLimits.maxBytes)
      throw new InputError(`${file}:1:1: the file is ${stat.size} bytes; expected at most ${fileLimits.maxBytes} bytes (1 MiB)`)
    const buffer = Buffer.alloc(fileLimits.maxBytes + 1)
    let length = 0
    for (;;) {
      const read = readSync(fd, buffer, length, buffer.length - length, null)
      if (read === 0) break
      length += read
      if (length > fileLimits.maxBytes)
        throw new InputError(`${file}:1:1: the file is more than ${fileLimits.maxBytes} bytes; expected at most ${fileLimits.maxBytes} bytes (1 MiB)`)
    }
    return buffer.subarray(0, length)
  } finally {
    closeSync(fd)
  }
}

/** The offset of the first byte that is not part of a valid UTF-8 sequence. */
function firstInvalidUtf8(bytes: Uint8Array): number {
  let offset = 0
  // The lenient decoder puts U+FFFD where a sequence is bad; a U+FFFD the file spells out is not one.
  for (const char of new TextDecoder('utf-8', {ignoreBOM: true}).decode(bytes)) {
    if (char === '\ufffd' && !(bytes[offset] === 0xef && bytes[offset + 1] === 0xbf && bytes[offset + 2] === 0xbd)) return offset
    offset += Buffer.byteLength(char)
  }
  return offset
}

/** 1-based line and column of an offset in text. */
function linePos(text: string, offset: number): {line: number; col: number} {
  let line = 1
  let lineStart = 0
  for (let i = 0; i < offset; i++)
    if (text.charCodeAt(i) === 10) {
      line++
      lineStart = i + 1
    }
  return {line, col: offset - lineStart + 1}
}

/**
 * A YAML file parsed with its positions kept, so that a schema error found in the data can be
 * reported at the file, line and column it came from.
 */
export class YamlSource implements ProblemSite {
  private constructor(
    readonly file: string,
    private readonly doc: Document,
    private readonly lines: LineCounter,
    private readonly value: unknown,
  ) {}

  /**
   * Parses YAML text; malformed YAML is an InputError at the first problem. So is anything that
   * would make the parser or the data a hazard rather than an input: text over the size limit, a
   * NUL, flow collections nested past the limit, a tag sluice does not know (`!!js/function`), an
   * alias to nothing, and aliases that expand past the limit.
   */
  static parse(file: string, text: string): YamlSource {
    const at = (offset: number, message: string): InputError => {
      const {line, col} = linePos(text, offset)
      return new InputError(`${file}:${line}:${col}: ${message}`)
    }
    const bytes = Buffer.byteLength(text)
    if (bytes > fileLimits.maxBytes) throw at(0, `the file is ${bytes} bytes; expected at most ${fileLimits.maxBytes} bytes (1 MiB)`)
    const nul = text.indexOf('\0')
    if (nul >= 0) throw at(nul, 'a NUL character; expected text')
    const deep = tooDeep(text)
    if (deep !== null) throw at(deep, `flow collections nested more than ${fileLimits.maxFlowDepth} deep`)

    const lines = new LineCounter()
    const doc = parseDocument(text, {lineCounter: lines, prettyErrors: false, uniqueKeys: true})
    // A warning is a tag the schema cannot resolve: its value would silently become a string.
    const problem = doc.errors[0] ?? doc.warnings[0]
    if (problem) {
      const what = problem.message.split('\n')[0].replace(/ at line \d+, column \d+:?$/, '')
      throw at(
        problem.pos[0],
        problem.code === 'TAG_RESOLVE_FAILED' ? `unknown tag: ${what.replace(/^Unresolved tag: /, '')}; expected plain YAML values` : `malformed YAML: ${what}`,
      )
    }
    let value: unknown
    try {
      value = doc.toJS({maxAliasCount: fileLimits.maxAliasCount})
    } catch (error) {
      // The yaml package says what went wrong with an alias but not where: the first alias is.
      let alias = 0
      visit(doc, {
        Alias: (_, node) => {
          alias = node.range?.[0] ?? 0
          return visit.BREAK
        },
      })
      const message = (error as Error).message
      if (/^Excessive alias count/.test(message))
        throw at(alias, `aliases expand to too many values (more than ${fileLimits.maxAliasCount} per alias); expected plain values or a few aliases`)
      throw at(alias, `malformed YAML: ${message}`)
    }
    return new YamlSource(file, doc, lines, value)
  }

  data(): unknown {
    return structuredClone(this.value)
  }

  /** `file:line:column` of the value at `path` (or of its key `keyOf`), or of its nearest ancestor that exists. */
  locate(path: Path, keyOf?: string): string {
    const {line, col} = this.lines.linePos(this.offset(path, keyOf))
    return `${this.file}:${line}:${col}`
  }

  error(problems: readonly Problem[]): InputError {
    const placed = problems.map((problem) => ({
      offset: this.offset(problem.path, problem.key),
      line: problemLine(this.locate(problem.path, problem.key), problem),
    }))
    // A stable sort: problems at one place keep the order they were found in.
    placed.sort((a, b) => a.offset - b.offset)
    return new InputError(placed.map((p) => p.line))
  }

  private offset(path: Path, keyOf?: string): number {
    let node = this.nodeAt(path)
    if (keyOf !== undefined && isMap(node)) {
      const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === keyOf)
      if (pair && isScalar(pair.key)) node = pair.key
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

/** The offset of the first flow collection nested past the limit, or null. Linear, unlike the parser. */
function tooDeep(text: string): number | null {
  let depth = 0
  let offset = 0
  for (const token of new Lexer().lex(text)) {
    if (token === '[' || token === '{') {
      if (++depth > fileLimits.maxFlowDepth) return offset
    } else if (token === ']' || token === '}') depth--
    // The lexer's control tokens stand for structure, not for characters of the text.
    if (!/^[\x02\x18\x1f\ufeff]$/.test(token)) offset += token.length
  }
  return null
}

export function valueAt(data: unknown, path: Path): unknown {
  let node = data
  for (const key of path) node = node && typeof node === 'object' ? (node as Record<PropertyKey, unknown>)[key] : undefined
  return node
}

/**
 * The issue that says most about a value no option of a union took: the issue of the option the
 * value came closest to (right type, fewest problems), at its full path; or the union's own when
 * the value was of no option's type.
 */
export function specificIssue(issue: z.core.$ZodIssue): z.core.$ZodIssue {
  if (issue.code !== 'invalid_union') return issue
  const typeOnly = (branch: z.core.$ZodIssue[]) => branch.length === 1 && branch[0].code === 'invalid_type' && branch[0].path.length === 0
  const closest = (issue.errors ?? []).filter((branch) => branch.length > 0 && !typeOnly(branch)).sort((a, b) => a.length - b.length)[0]
  if (!closest) return issue
  const inner = specificIssue(closest[0])
  return {...inner, path: [...issue.path, ...inner.path]}
}

/** One readable sentence for a schema issue: what was expected and what was found. */
export function describeIssue(issue: z.core.$ZodIssue, data?: unknown): string {
  switch (issue.code) {
    case 'invalid_union': {
      const got = valueAt(data, issue.path)
      const shown = got === undefined ? '' : `, got ${typeof got === 'number' ? String(got) : JSON.stringify(got)}`
      const options = (issue as {options?: unknown[]}).options
      if (options) return `expected one of ${options.join(', ')}${shown}`
      const types = [...new Set((issue.errors ?? []).flatMap((branch) => branch.flatMap((i) => (i.code === 'invalid_type' ? [i.expected] : []))))]
      return types.length > 0 ? `expected ${types.join(' or ')}${shown}` : issue.message
    }
    case 'unrecognized_keys': {
      return `unknown key ${issue.keys.map((k) => `"${k}"`).join(', ')}`
    }
    case 'too_small': {
      if (ownWording(issue)) return issue.message
      const bound = Number(issue.minimum)
      if (issue.origin === 'array') return `expected at least ${bound} item${bound === 1 ? '' : 's'}`
      return `expected a number ${issue.inclusive ? '>=' : '>'} ${bound}`
    }
    case 'too_big': {
      if (ownWording(issue)) return issue.message
      if (issue.origin === 'array') return `expected at most ${Number(issue.maximum)} items`
      return `expected a number ${issue.inclusive ? '<=' : '<'} ${Number(issue.maximum)}`
    }
    default: {
      return issue.message.replace(/^Invalid input: /, '')
    }
  }
}

/** A bound whose schema says in its own words what was expected (and why), rather than zod's. */
function ownWording(issue: z.core.$ZodIssue): boolean {
  return !/^(Too big|Too small):/.test(issue.message)
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
