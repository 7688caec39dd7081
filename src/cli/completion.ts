/**
 * Shell completion of what oclif's generated scripts cannot know: argument and flag values that
 * come from the package and the state store (shipped runbook names, run ids, scenario and setup
 * names). The shells ask `sluice complete -- WORDS...` (the words after `sluice`, the last being
 * the one under the cursor, maybe empty); what it prints is the protocol, kept to lines so any
 * shell can read it:
 *
 * - nothing: not a position sluice completes (a command name, a flag right after the command,
 *   free text); the shell falls back to oclif's static completion of commands and flags;
 * - otherwise a first line saying what else the shell adds, `:files` (YAML files and directories,
 *   for a runbook or scenario, which may be a file) or `:values` (nothing), then one candidate a
 *   line, already filtered by what has been typed of the word: a value, or a flag's name after an
 *   argument or another flag, where the static scripts find no command.
 *
 * Everything here reads and never writes, and any failure completes nothing: see `complete`.
 */
import {loadRunbook, shippedRunbookNames} from '../loader/shipped.js'
import {builtinScenarioNames, loadScenario} from '../sim/scenario/load-scenario.js'
import {runChoices} from '../state/run-choices.js'
import {resolveScenarioRef} from '../wiring/scenario-ref.js'
import {peekStore} from '../wiring/state.js'

/** What oclif's manifest says of a command: enough to tell which word is which. */
export interface CommandShape {
  id: string
  /** In their order on the command line. */
  args: Record<string, unknown>
  flags: Record<
    string,
    {type: 'boolean' | 'option'; char?: string; options?: readonly string[]; default?: unknown; hidden?: boolean; multiple?: boolean; allowNo?: boolean}
  >
  /** false: more arguments than declared are taken (validate's runbooks), each like the last. */
  strict?: boolean
}

/** The kinds of value sluice completes. */
export type ValueKind = 'runbook' | 'run' | 'scenario' | 'setup' | 'runbook-or-scenario' | {options: readonly string[]}

/** Where the cursor is, as far as completion cares: what kind of value, what is typed of it, and the words before it. */
export interface Position {
  command: CommandShape
  kind: ValueKind
  /** What has been typed of the value (after `--flag=`, when given so). */
  typed: string
  /** Flag values given before the cursor, by flag name (the last one, for a repeated flag). */
  flags: Record<string, string>
  /** Arguments given before the cursor, in order. */
  args: string[]
}

/** The argument names whose values sluice completes, whatever the command. */
const argKinds: Record<string, ValueKind> = {runbook: 'runbook', run: 'run', target: 'runbook-or-scenario'}
/** The flag names whose values sluice completes; a flag with fixed options completes those. */
const flagKinds: Record<string, ValueKind> = {run: 'run', scenario: 'scenario', setup: 'setup'}

/**
 * Which value the last word is, or null when it is not one sluice completes. `find` looks a
 * command up by its id (`freeze:check`); the command is the longest run of leading words that is
 * one. Bash splits `--flag=value` at the `=` into three words; they are joined back here.
 */
export function positionOf(words: string[], find: (id: string) => CommandShape | undefined): Position | null {
  const joined = joinEquals(words)
  if (joined.length < 2) return null
  const before = joined.slice(0, -1)
  const current = joined.at(-1)!
  let command: CommandShape | undefined
  let rest: string[] = []
  for (let n = Math.min(before.length, 3); n >= 1 && !command; n--) {
    command = find(before.slice(0, n).join(':'))
    rest = before.slice(n)
  }
  if (!command) return null

  const byChar = new Map(Object.entries(command.flags).flatMap(([name, f]) => (f.char ? [[f.char, name] as const] : [])))
  const takesValue = (name: string | undefined) => name !== undefined && command.flags[name]?.type === 'option'
  const flags: Record<string, string> = {}
  const args: string[] = []
  const given = new Set<string>()
  let pending: string | undefined
  let onlyArgs = false
  for (const word of rest) {
    if (pending !== undefined) {
      flags[pending] = word
      pending = undefined
    } else if (onlyArgs || !word.startsWith('-') || word === '-') args.push(word)
    else if (word === '--') onlyArgs = true
    else {
      const {name, value} = flagWord(word, byChar)
      if (name !== undefined) given.add(name.replace(/^no-/, ''))
      if (value !== undefined) flags[name ?? ''] = value
      else if (takesValue(name)) pending = name
    }
  }

  const at = (kind: ValueKind | undefined, typed: string): Position | null => (kind ? {command, kind, typed, flags, args} : null)
  if (pending !== undefined) return at(flagKind(command, pending), current)
  if (!onlyArgs && current.startsWith('-')) {
    // Only `--name=value`: a shell completes the value after the `=` as a word of its own; in
    // `-sVALUE` it would replace the flag too.
    const {name, value} = current.startsWith('--') ? flagWord(current, byChar) : {}
    if (value !== undefined) return takesValue(name) ? at(flagKind(command, name!), value) : null
    // A flag's name after an argument or another flag (`run outlook-staged-return --`): the
    // plugin's static scripts look the command up by every word before the cursor and find none
    // there. Right after the command they find it, and zsh's shows each flag's description: left to them.
    return rest.length > 0 ? at({options: flagNames(command, given)}, current) : null
  }
  const names = Object.keys(command.args)
  const name = names[args.length] ?? (command.strict === false ? names.at(-1) : undefined)
  return at(name === undefined ? undefined : argKinds[name], current)
}

/** The command's flags as typed (`--name`, `--no-name` for a negatable one), leaving out hidden ones and those given already that cannot be given twice. */
function flagNames(command: CommandShape, given: Set<string>): string[] {
  return Object.entries(command.flags).flatMap(([name, f]) =>
    f.hidden || (given.has(name) && !f.multiple) ? [] : [`--${name}`, ...(f.allowNo ? [`--no-${name}`] : [])],
  )
}

/** `--name=value`, `--name`, `-c`, `-cVALUE` as a flag name (undefined if unknown) and its value if it carries one. */
function flagWord(word: string, byChar: Map<string, string>): {name?: string; value?: string} {
  if (word.startsWith('--')) {
    const eq = word.indexOf('=')
    return eq < 0 ? {name: word.slice(2)} : {name: word.slice(2, eq), value: word.slice(eq + 1)}
  }
  const name = byChar.get(word[1])
  return word.length > 2 ? {name, value: word.slice(word[2] === '=' ? 3 : 2)} : {name}
}

function flagKind(command: CommandShape, name: string): ValueKind | undefined {
  const options = command.flags[name]?.options
  return options && options.length > 0 ? {options} : flagKinds[name]
}

/** Bash's words for `--scenario=fo` are `--scenario`, `=`, `fo` (and `--scenario`, `=` right after the `=`). */
function joinEquals(words: string[]): string[] {
  const out: string[] = []
  for (let i = 0; i < words.length; i++) {
    const word = words[i]
    if (word === '=' && out.length > 0 && out.at(-1)!.startsWith('-') && !out.at(-1)!.includes('=')) {
      out[out.length - 1] += `=${i + 1 < words.length ? words[++i] : ''}`
    } else out.push(word)
  }
  return out
}

/** Where the candidates come from: the package, and the state store read as it is. */
export interface Sources {
  runbooks(): string[]
  scenarios(): string[]
  /** The setups of the scenario a command would rehearse against, given its words so far. */
  setups(position: Position): string[]
  /** Run ids, running first, from the store `--state` names (or the default). */
  runs(stateFlag: string | undefined): Promise<string[]>
}

/** What the shell is told for a position: the candidates, and whether YAML files are candidates too. */
export interface Completion {
  files: boolean
  candidates: string[]
}

export async function completionAt(position: Position, sources: Sources): Promise<Completion> {
  const {kind} = position
  const matching = (values: readonly string[]) => [...new Set(values)].filter((v) => v.startsWith(position.typed))
  if (typeof kind === 'object') return {files: false, candidates: matching(kind.options)}
  switch (kind) {
    case 'runbook':
      return {files: true, candidates: matching(sources.runbooks())}
    case 'scenario':
      return {files: true, candidates: matching(sources.scenarios())}
    case 'runbook-or-scenario':
      return {files: true, candidates: matching([...sources.runbooks(), ...sources.scenarios()])}
    case 'setup':
      return {files: false, candidates: matching(sources.setups(position))}
    case 'run':
      return {files: false, candidates: matching(await sources.runs(position.flags.state))}
  }
}

/** The lines `sluice complete` prints for a completion (see the protocol above). */
export function completionLines(completion: Completion): string[] {
  return [completion.files ? ':files' : ':values', ...completion.candidates]
}

/**
 * What `sluice complete -- WORDS...` prints, as lines. Never throws: a broken store, a runbook that
 * does not load, anything, completes nothing rather than print into the shell.
 */
export async function complete(words: string[], find: (id: string) => CommandShape | undefined): Promise<string[]> {
  try {
    const position = positionOf(words, find)
    if (!position) return []
    return completionLines(await completionAt(position, packageSources))
  } catch {
    return []
  }
}

/** Each source on its own fails to nothing, so a bad store still completes runbook names, and the other way round. */
const quietly = <T>(f: () => T, none: T): T => {
  try {
    return f()
  } catch {
    return none
  }
}

const packageSources: Sources = {
  runbooks: () => quietly(() => shippedRunbookNames(), []),
  scenarios: () => quietly(() => builtinScenarioNames(), []),
  setups: (position) => quietly(() => Object.keys(loadScenario(scenarioOf(position)).scenario.setups), []),
  async runs(stateFlag) {
    try {
      const store = peekStore(stateFlag)
      return store ? await runChoices(store) : []
    } catch {
      return []
    }
  },
}

/** The scenario a command would rehearse against: --scenario, else its runbook's (or drill's scenario), else the flag's default. */
function scenarioOf({command, flags, args}: Position): string {
  if (flags.scenario) return flags.scenario
  const ref = 'runbook' in command.args || 'target' in command.args ? args[0] : undefined
  if (ref !== undefined) {
    if ('target' in command.args && builtinScenarioNames().includes(ref)) return ref
    const runbook = quietly(() => loadRunbook(ref), undefined)
    if (runbook?.rehearsal?.scenario) return resolveScenarioRef(runbook.rehearsal.scenario, runbook.file)
    if (runbook === undefined && 'target' in command.args) return ref
  }
  const fallback = command.flags.scenario?.default
  if (typeof fallback === 'string') return fallback
  throw new Error('no scenario to read setups from')
}
