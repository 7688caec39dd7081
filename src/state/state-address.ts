import {homedir} from 'node:os'
import {isAbsolute} from 'node:path'
import {InputError} from '../errors.js'

// What a state address may be, read the same way wherever it is given (--state, $SLUICE_STATE, a
// config file): a directory, or the URL of a team store whose scheme sluice knows. Anything that
// looks like a URL but is not one of those is refused: taken as a directory it would be a store of
// its own beside the file, and `freeze check` there says "not frozen" while the team is frozen.

/**
 * The team stores sluice knows, by URL scheme (matched in any case): the one table a new store
 * joins. `wiring/state.ts` opens each; TypeScript holds it to every scheme named here.
 */
const stores = {
  dynamodb: {
    form: 'dynamodb://TABLE',
    /** DynamoDB's own rule for a table name; case matters in it, so it is kept as written. */
    name: /^[A-Za-z0-9_.-]{3,255}$/,
    names: 'TABLE a DynamoDB table name (3 to 255 of A-Z a-z 0-9 _ . -)',
  },
  s3: {
    form: 's3://BUCKET/PREFIX',
    /** S3's rule for a bucket name, then an optional prefix of key-safe characters. */
    name: /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](\/[A-Za-z0-9!_.*'()/-]*)?$/,
    names: "BUCKET an S3 bucket name (3 to 63 of a-z 0-9 . -) and PREFIX an optional key prefix (A-Z a-z 0-9 ! _ . * ' ( ) - /)",
  },
} as const

export type StoreScheme = keyof typeof stores

export type StateAddress = {kind: 'directory'; path: string} | {kind: 'store'; scheme: StoreScheme; name: string}

/** What an address may be, in words for an error or a flag's help: `a directory or dynamodb://TABLE`. */
export const STATE_FORMS = `a directory or ${Object.values(stores)
  .map((s) => s.form)
  .join(' or ')}`

/** The address as sluice shows it: the directory, or the URL with its scheme in lower case. */
export function addressText(address: StateAddress): string {
  return address.kind === 'directory' ? address.path : `${address.scheme}://${address.name}`
}

const isScheme = (s: string): s is StoreScheme => Object.hasOwn(stores, s)

/** The home directory `~` stands for, and the user's XDG defaults sit under; refused when there is none to trust. */
export function homeDirectory(env: NodeJS.ProcessEnv, forWhat: string): string {
  // Unset, HOME falls back to the password database (homedir() does that); set but empty,
  // homedir() returns "" and every path under it would be relative: the working directory.
  const home = env.HOME === undefined ? safeHomedir() : env.HOME
  if (home && isAbsolute(home)) return home
  const what = home ? `$HOME is "${home}", not an absolute path` : env.HOME === undefined ? 'there is no home directory for this user' : '$HOME is empty'
  throw new InputError(
    `${what}, so sluice has no home directory ${forWhat}; set HOME to your home directory, or name the state with --state or $SLUICE_STATE (${STATE_FORMS})`,
  )
}

function safeHomedir(): string {
  try {
    return homedir()
  } catch {
    return ''
  }
}

/**
 * Expands a leading `~` or `~/` (the home directory) and every `$NAME` or `${NAME}` (from the
 * environment), as a shell would have had the value been typed unquoted. Whatever a shell would
 * expand differently, or to nothing, is refused rather than taken as written: `~user`, an unset
 * or empty variable, a `$` not followed by a name.
 */
function expand(value: string, env: NodeJS.ProcessEnv, where: string): string {
  const bad = (why: string) => new InputError(`${where}: ${JSON.stringify(value)}: ${why}`)
  let text = value
  if (text === '~' || text.startsWith('~/')) text = homeDirectory(env, `for the ~ in ${where}`) + text.slice(1)
  else if (text.startsWith('~')) throw bad('sluice expands ~ and ~/ (your home directory), not ~USER; write the path in full')
  return text.replace(/\$(?:\{([^}]*)\}|([A-Za-z_][A-Za-z0-9_]*)|)/g, (whole, braced: string | undefined, plain: string | undefined) => {
    const name = braced ?? plain
    if (name === undefined || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      throw bad(
        `${whole === '$' ? 'a $ that names no variable' : `${whole} is not a variable sluice expands`}; expected $NAME or \${NAME}, or the path written in full`,
      )
    const got = env[name]
    if (!got) throw bad(`$${name} is ${got === undefined ? 'not set' : 'empty'}; set it, or write the path in full`)
    return got
  })
}

/**
 * Reads a state address given by `where` (`--state`, `$SLUICE_STATE`, `file:line:column: state`):
 * trimmed; `~` and variables expanded; a store URL's scheme matched in any case. A relative
 * directory is left relative (the caller knows what it is relative to). Bad input names `where`,
 * the value as given and what was expected.
 */
export function parseStateAddress(raw: string, where: string, env: NodeJS.ProcessEnv): StateAddress {
  const trimmed = raw.trim()
  if (trimmed === '') throw new InputError(`${where}: expected ${STATE_FORMS}, got an empty value`)
  const bad = (why: string) => new InputError(`${where}: ${JSON.stringify(raw)} ${why}`)
  if (/[\u0000-\u001f\u007f]/.test(trimmed)) throw bad(`has a control character in it: expected ${STATE_FORMS}`)
  const value = expand(trimmed, env, where)
  // A colon before any slash: a URL (s3:bucket, dynamodb:/x, foo://x), unless it is a drive letter.
  const colon = value.indexOf(':')
  const slash = value.search(/[/\\]/)
  const url = colon > 0 && (slash < 0 || colon < slash) && !/^[A-Za-z]:[/\\]/.test(value)
  if (!url) return {kind: 'directory', path: value}
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/(.*)$/s.exec(value)
  const scheme = (m?.[1] ?? value.slice(0, colon)).trim().toLowerCase()
  const asDirectory = `(a directory whose name has a colon is written ./${value})`
  if (!isScheme(scheme))
    throw bad(
      m
        ? `names a store sluice does not know (${scheme}://): expected ${STATE_FORMS}`
        : `is neither a directory nor a store URL: expected ${STATE_FORMS} ${asDirectory}`,
    )
  const store = stores[scheme]
  // `an s3://`, `a dynamodb://`: the article as the scheme is read aloud.
  if (!m) throw bad(`is not ${/^[aefhilmnorsx]/.test(scheme) ? 'an' : 'a'} ${scheme}:// address: expected ${store.form}`)
  if (!store.name.test(m[2])) throw bad(`does not name a store: expected ${store.form}, ${store.names}`)
  return {kind: 'store', scheme, name: m[2]}
}
