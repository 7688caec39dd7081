import {existsSync, statSync} from 'node:fs'
import {homedir} from 'node:os'
import {dirname, isAbsolute, join, resolve} from 'node:path'
import {z} from 'zod'
import {InputError} from '../errors.js'
import {readInputText, validate, YamlSource} from '../input/yaml-source.js'

/** Which store a command uses, and why that one: said on the first line of every live command. */
export interface StateChoice {
  /** A directory, or dynamodb://TABLE. */
  spec: string
  /** Where the choice came from, in words: `--state`, `$SLUICE_STATE`, a config file, the default. */
  from: string
  /** A one-line notice to show with it (an old ./.sluice found, and how to move it). */
  notice?: string
}

/** The config file sluice reads: a working tree's `sluice.yaml`, or the user's own. */
const configSchema = z.strictObject({
  state: z.string().min(1).describe('where journals, locks and the freeze live: a directory (relative to this file) or dynamodb://TABLE'),
})

/** The working tree's sluice.yaml: in the current directory or the nearest one above it. */
function worktreeConfig(cwd: string): string | undefined {
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    const file = join(dir, 'sluice.yaml')
    if (existsSync(file)) return file
    if (dirname(dir) === dir) return undefined
  }
}

const home = (env: NodeJS.ProcessEnv) => env.HOME || homedir()

/** `$XDG_CONFIG_HOME/sluice/config.yaml`, else `~/.config/sluice/config.yaml`. */
export function userConfigFile(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CONFIG_HOME || join(home(env), '.config'), 'sluice', 'config.yaml')
}

/** `$XDG_STATE_HOME/sluice`, else `~/.local/state/sluice`: one place for every shell of this user. */
export function userStateDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_STATE_HOME || join(home(env), '.local', 'state'), 'sluice')
}

/** The `state` a config file names, checked (file:line:column for what is wrong). */
function stateIn(file: string): string {
  const source = YamlSource.parse(file, readInputText(file))
  const {state} = validate(configSchema, source.data(), source)
  if (/^[a-z0-9]+:\/\//.test(state) || isAbsolute(state)) return state
  return resolve(dirname(file), state)
}

/**
 * Where state lives: `--state`, then `$SLUICE_STATE`, then a `sluice.yaml` in the working tree,
 * then the user's config file, then a `./.sluice` left by an older sluice (with a notice saying how
 * to move it), then the user's state directory. Never the working directory by default: a freeze
 * one shell cannot see from another is no freeze.
 */
export function chooseState(flag: string | undefined, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): StateChoice {
  if (flag !== undefined) {
    if (flag.trim() === '') throw new InputError('--state: expected a directory or dynamodb://TABLE, got an empty value')
    return {spec: flag, from: '--state'}
  }
  if (env.SLUICE_STATE) return {spec: env.SLUICE_STATE, from: '$SLUICE_STATE'}
  for (const file of [worktreeConfig(cwd), userConfigFile(env)]) {
    if (!file || !existsSync(file)) continue
    try {
      return {spec: stateIn(file), from: `named in ${file}`}
    } catch (error) {
      if (error instanceof InputError) throw error
      throw new InputError(`${file}:1:1: cannot read the sluice config file: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`)
    }
  }
  const user = userStateDir(env)
  const legacy = join(cwd, '.sluice')
  if (existsSync(legacy) && statSync(legacy).isDirectory() && resolve(legacy) !== resolve(user))
    return {
      spec: legacy,
      from: 'an old ./.sluice in this directory',
      notice: `./.sluice is where an older sluice kept state; other directories and pipelines do not see it. Move it with \`mkdir -p ${dirname(user)} && mv .sluice ${user}\` (if ${user} is empty), or name a team store in ${userConfigFile(env)} (state: dynamodb://TABLE)`,
    }
  return {spec: user, from: 'the user default'}
}
