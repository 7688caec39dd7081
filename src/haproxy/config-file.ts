import {readFileSync, readdirSync, statSync} from 'node:fs'
import {join} from 'node:path'
import {InputError} from '../errors.js'

/**
 * Just enough of haproxy.cfg to read a backend's check settings, which the Runtime API does not
 * show (inter, slowstart, timeouts): sections, their keyword lines, and which `defaults` section
 * each proxy inherits. Not a validator: a line sluice does not need is kept as words and never
 * looked at, so a config HAProxy accepts is never refused here for a keyword sluice does not know.
 */

/** One keyword line, split into words, with where it was written (for `from` and for errors). */
export interface ConfigLine {
  words: string[]
  file: string
  line: number
}

export interface ConfigSection {
  kind: string
  name: string
  /** The section's header line. */
  at: ConfigLine
  lines: ConfigLine[]
  /** The `defaults` section this one inherits (the last one before it, or the one `from` names). */
  defaults: ConfigSection | null
}

/**
 * Every word that opens a section. Sections sluice does not read (peers, resolvers, …) still end
 * the one before them, so their lines must not be taken as a backend's.
 */
const sectionKeywords = new Set([
  'global',
  'defaults',
  'frontend',
  'backend',
  'listen',
  'peers',
  'resolvers',
  'userlist',
  'mailers',
  'program',
  'http-errors',
  'ring',
  'cache',
  'fcgi-app',
  'crt-store',
  'traces',
  'log-forward',
])

/** Sections that carry traffic and so inherit a `defaults` section. */
const proxyKinds = new Set(['frontend', 'backend', 'listen'])

/**
 * A line's words: HAProxy splits on blanks, honours "double" and 'single' quotes and backslash
 * escapes, and a `#` outside quotes starts a comment.
 */
export function wordsOf(text: string): string[] {
  const words: string[] = []
  let word: string | null = null
  let quote: '"' | "'" | null = null
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (quote) {
      if (c === quote) quote = null
      else if (c === '\\' && quote === '"' && i + 1 < text.length) word += text[++i]
      else word += c
      continue
    }
    if (c === '#') break
    if (c === ' ' || c === '\t' || c === '\r') {
      if (word !== null) words.push(word)
      word = null
      continue
    }
    word ??= ''
    if (c === '"' || c === "'") quote = c
    else if (c === '\\' && i + 1 < text.length) word += text[++i]
    else word += c
  }
  if (word !== null) words.push(word)
  return words
}

/**
 * The sections of one configuration, given as HAProxy reads it: its files in order, one stream,
 * so a `defaults` section in the first file applies to backends in the next.
 */
export function parseConfig(files: Array<{file: string; text: string}>): ConfigSection[] {
  const sections: ConfigSection[] = []
  const namedDefaults = new Map<string, ConfigSection>()
  let lastDefaults: ConfigSection | null = null
  let current: ConfigSection | null = null
  for (const {file, text} of files) {
    text.split('\n').forEach((raw, i) => {
      const words = wordsOf(raw)
      if (words.length === 0) return
      const at: ConfigLine = {words, file, line: i + 1}
      if (!sectionKeywords.has(words[0])) {
        current?.lines.push(at)
        return
      }
      const [kind, name = ''] = words
      // `backend app from NAME` (HAProxy 2.4 on) inherits a named defaults section instead of the last one.
      const fromAt = words.indexOf('from')
      let defaults = proxyKinds.has(kind) ? lastDefaults : null
      if (fromAt > 0 && words[fromAt + 1] !== undefined && (proxyKinds.has(kind) || kind === 'defaults')) {
        defaults = namedDefaults.get(words[fromAt + 1]) ?? null
        if (!defaults) throw new InputError(`${file}:${i + 1}: ${kind} ${name} inherits defaults ${words[fromAt + 1]}, which no section before it defines`)
      }
      current = {kind, name: fromAt === 1 ? '' : name, at, lines: [], defaults}
      sections.push(current)
      if (kind === 'defaults') {
        lastDefaults = current
        if (current.name) namedDefaults.set(current.name, current)
      }
    })
    // A section does not run on into the next file's first lines.
    current = null
  }
  return sections
}

/**
 * The files of `-f PATH`: a file, or a directory whose `*.cfg` files HAProxy reads in lexical
 * order (its other files are skipped, as HAProxy skips them).
 */
export function configFiles(path: string): string[] {
  let isDirectory: boolean
  try {
    isDirectory = statSync(path).isDirectory()
  } catch (error) {
    throw new InputError(`HAProxy configuration ${path}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}`)
  }
  if (!isDirectory) return [path]
  return readdirSync(path)
    .filter((f) => f.endsWith('.cfg'))
    .sort()
    .map((f) => join(path, f))
    .filter((f) => statSync(f).isFile())
}

/** Reads and parses a configuration made of `paths` (each a file or a directory, in HAProxy's order). */
export function readConfig(paths: string[]): ConfigSection[] {
  const files = paths.flatMap(configFiles).map((file) => {
    try {
      return {file, text: readFileSync(file, 'utf8')}
    } catch (error) {
      throw new InputError(`HAProxy configuration ${file}: ${(error as Error).message}`)
    }
  })
  return parseConfig(files)
}

/**
 * A time as HAProxy writes it, in seconds: a number with `us`, `ms`, `s`, `m`, `h` or `d`, or bare,
 * which HAProxy takes as milliseconds. Null when it is not one.
 */
export function seconds(value: string): number | null {
  const m = /^(\d+(?:\.\d+)?)(us|ms|s|m|h|d)?$/.exec(value)
  if (!m) return null
  const scale = {us: 1e-6, ms: 1e-3, s: 1, m: 60, h: 3600, d: 86400}[m[2] ?? 'ms']!
  // Milliseconds and microseconds as exact decimals, not 0.30000000000000004.
  return Number((Number(m[1]) * scale).toPrecision(12))
}
