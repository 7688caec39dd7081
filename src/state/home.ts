import {existsSync, lstatSync, readlinkSync, statSync} from 'node:fs'
import {dirname, isAbsolute, join, resolve} from 'node:path'
import {z} from 'zod'
import {InputError} from '../errors.js'
import {readInputText, validate, YamlSource} from '../input/yaml-source.js'
import {addressText, homeDirectory, parseStateAddress, STATE_FORMS, type StateAddress} from './state-address.js'

/** Which store a command uses, and why that one: said on the first line of every live command. */
export interface StateChoice {
  /** The address as shown: a directory, or a store URL with its scheme in lower case (dynamodb://TABLE). */
  spec: string
  address: StateAddress
  /** Where the choice came from, in words: `--state`, `$SLUICE_STATE`, a config file, the default. */
  from: string
  /** One-line notices to show with it: an old ./.sluice found, and how to move it; a relative XDG variable ignored. */
  notices: string[]
}

/** The config file sluice reads: a working tree's `sluice.yaml`, or the user's own. */
const configSchema = z.strictObject({
  state: z.string().min(1).describe(`where journals, locks and the freeze live: ${STATE_FORMS} (a relative directory is from this file)`),
})

/** Whether anything is at `file`, a dangling or looping link included (existsSync says no to those, and a config would go unread). */
function present(file: string): boolean {
  try {
    lstatSync(file)
    return true
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return false
    throw new InputError(`${file}: cannot look for a sluice config file here: ${code ?? String(error)}`)
  }
}

/** The working tree's sluice.yaml: in the current directory or the nearest one above it. */
function worktreeConfig(cwd: string): string | undefined {
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    const file = join(dir, 'sluice.yaml')
    if (present(file)) return file
    if (dirname(dir) === dir) return undefined
  }
}

/**
 * An XDG base directory: the variable when it holds an absolute path, else the default under the
 * home directory. A relative one is ignored, as the XDG Base Directory spec says ("it should
 * consider the path invalid and ignore it"), and said so: state that followed it would follow the
 * working directory.
 */
function xdgBase(env: NodeJS.ProcessEnv, variable: 'XDG_STATE_HOME' | 'XDG_CONFIG_HOME', under: string[], forWhat: string) {
  const set = env[variable]
  if (set && isAbsolute(set)) return {dir: set, notices: []}
  const dir = join(homeDirectory(env, forWhat), ...under)
  const notices = set ? [`$${variable} is "${set}", a relative path, which the XDG Base Directory spec says to ignore: using ${dir} instead`] : []
  return {dir, notices}
}

/** `$XDG_CONFIG_HOME/sluice/config.yaml`, else `~/.config/sluice/config.yaml`. */
export function userConfigFile(env: NodeJS.ProcessEnv = process.env): {file: string; notices: string[]} {
  const {dir, notices} = xdgBase(env, 'XDG_CONFIG_HOME', ['.config'], 'to find its config file in (~/.config/sluice/config.yaml)')
  return {file: join(dir, 'sluice', 'config.yaml'), notices}
}

/** `$XDG_STATE_HOME/sluice`, else `~/.local/state/sluice`: one place for every shell of this user. */
export function userStateDir(env: NodeJS.ProcessEnv = process.env): {dir: string; notices: string[]} {
  const {dir, notices} = xdgBase(env, 'XDG_STATE_HOME', ['.local', 'state'], 'to keep state in (~/.local/state/sluice)')
  return {dir: join(dir, 'sluice'), notices}
}

/** Why a config file that is there cannot be read, in words. */
function unreadable(file: string, error: unknown): InputError {
  const code = (error as NodeJS.ErrnoException).code
  const link = (() => {
    try {
      return readlinkSync(file)
    } catch {
      return undefined
    }
  })()
  const why =
    code === 'ENOENT' && link !== undefined
      ? `a symbolic link to ${link}, which does not exist`
      : code === 'ELOOP'
        ? `a symbolic link that loops${link === undefined ? '' : ` (to ${link})`}`
        : code === 'EACCES' || code === 'EPERM'
          ? `permission denied (${code})`
          : (code ?? (error as Error).message)
  return new InputError(
    `${file}:1:1: cannot read this sluice config file: ${why}; fix or remove it (sluice does not skip a config file: it may name the team's store)`,
  )
}

/** The state a config file names, checked (file:line:column for what is wrong); a relative directory is from the file. */
function stateIn(file: string, env: NodeJS.ProcessEnv): StateAddress {
  let text: string
  try {
    text = readInputText(file)
  } catch (error) {
    if (error instanceof InputError) throw error
    throw unreadable(file, error)
  }
  const source = YamlSource.parse(file, text)
  const {state} = validate(configSchema, source.data(), source)
  const address = parseStateAddress(state, `${source.locate(['state'])}: state`, env)
  return address.kind === 'directory' ? {kind: 'directory', path: resolve(dirname(file), address.path)} : address
}

const chosen = (address: StateAddress, from: string, notices: string[] = []): StateChoice => ({spec: addressText(address), address, from, notices})

/**
 * Where state lives: `--state`, then `$SLUICE_STATE`, then a `sluice.yaml` in the working tree,
 * then the user's config file, then a `./.sluice` left by an older sluice (with a notice saying how
 * to move it), then the user's state directory. Never the working directory by default: a freeze
 * one shell cannot see from another is no freeze. Wherever it is named, an address is one sluice
 * can read (src/state/state-address.ts) or bad input naming where it was named.
 */
export function chooseState(flag: string | undefined, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): StateChoice {
  if (flag !== undefined) return chosen(parseStateAddress(flag, '--state', env), '--state')
  // Empty is unset, as a shell's `SLUICE_STATE= sluice …` means it.
  if (env.SLUICE_STATE) return chosen(parseStateAddress(env.SLUICE_STATE, '$SLUICE_STATE', env), '$SLUICE_STATE')
  const tree = worktreeConfig(cwd)
  if (tree) return chosen(stateIn(tree, env), `named in ${tree}`)
  const user = userConfigFile(env)
  if (present(user.file)) return chosen(stateIn(user.file, env), `named in ${user.file}`, user.notices)
  const state = userStateDir(env)
  const notices = [...user.notices, ...state.notices]
  const legacy = join(cwd, '.sluice')
  if (existsSync(legacy) && statSync(legacy).isDirectory() && resolve(legacy) !== resolve(state.dir))
    return chosen({kind: 'directory', path: legacy}, 'an old ./.sluice in this directory', [
      `./.sluice is where an older sluice kept state; other directories and pipelines do not see it. Move it with \`mkdir -p ${dirname(state.dir)} && mv .sluice ${state.dir}\` (if ${state.dir} is empty), or name a team store in ${user.file} (state: dynamodb://TABLE)`,
      ...notices,
    ])
  return chosen({kind: 'directory', path: state.dir}, 'the user default', notices)
}
