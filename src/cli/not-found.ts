import {toConfiguredId, type Hook} from '@oclif/core'
import {closest} from '../input/closest.js'
import {exitCodeOf} from './exit-codes.js'

/**
 * Commands that change no live state (no DNS, load balancer or sluice state: they read, rehearse,
 * drill on loopback, or write a file they are told to): a guess at one of them may run after one
 * yes. Any other command (run, resume, rollback, the controls, freeze, the single actions) can
 * change live state, so a guess at it runs only after a second yes that names exactly what will
 * run, and it takes --yes. A command added later is on the careful side until it is listed here.
 */
export const leaveLiveStateAlone: ReadonlySet<string> = new Set([
  'help',
  'journal',
  'locks',
  'status',
  'watch',
  'validate',
  'assess',
  'calibrate',
  'plan',
  'schema',
  'runbooks',
  'simulate',
  'freeze:check',
  'iam-policy',
  'haproxy-config',
  'drill',
  // It reads the store; a control from its page (--controls) is confirmed there, and sent by a person.
  'serve',
  'tune',
  'autocomplete',
  'complete',
  'version',
])

/**
 * A mistyped command is bad input (exit 2), with what was probably meant. On a terminal it asks
 * "did you mean …?" with No as the default; yes runs a read-only guess, and a guess that can
 * change something only after a second yes. Without a terminal the suggestion is the error's one
 * line, so a script's log says what was meant and nothing runs.
 */
const commandNotFound: Hook.CommandNotFound = async function (options) {
  const {config} = options
  const visible = config.commands.filter((c) => !c.hidden).flatMap((c) => [c.id, ...c.aliases])
  // With a space between topic and command, oclif joins the arguments into the id too
  // (`pasue RUN` arrives as `pasue:RUN`): the longest leading part with a close command is the command.
  const parts = options.id.split(':')
  const given = [...parts.slice(1), ...(options.argv ?? [])]
  const ends = given.indexOf('--')
  // Under --json the error is a JSON object on stdout, as every command's is (src/cli/base.ts), and nothing is asked.
  const json = (ends === -1 ? given : given.slice(0, ends)).includes('--json')
  const fail = (message: string, suggestion?: string) => {
    if (json) process.stdout.write(`${JSON.stringify({error: {message, exit: exitCodeOf('bad-input'), ...(suggestion ? {suggestion} : {})}}, null, 2)}\n`)
    else process.stderr.write(`Error: ${message}\n`)
    return this.exit(exitCodeOf('bad-input'))
  }
  let k = parts.length
  while (k > 1 && closest(parts.slice(0, k).join(':'), visible) === undefined) k--
  const suggestion = closest(parts.slice(0, k).join(':'), visible)
  const typed = toConfiguredId(parts.slice(0, k).join(':'), config)
  // The command is right and what follows it is an argument it does not take (`simulate outlook-2026`).
  let exact = parts.length - 2
  while (exact >= 0 && !visible.includes(parts.slice(0, exact + 1).join(':'))) exact--
  if (exact >= 0) {
    const command = toConfiguredId(parts.slice(0, exact + 1).join(':'), config)
    const extra = parts.slice(exact + 1).join(' ')
    return fail(`${command} takes no argument ${JSON.stringify(extra)}; \`${config.bin} ${command} --help\` shows its flags`)
  }
  const hint = suggestion === undefined ? '' : `; did you mean ${toConfiguredId(suggestion, config)}?`
  const refuse = () =>
    fail(`${typed} is not a ${config.bin} command${hint} (${config.bin} help lists every command)`, suggestion && toConfiguredId(suggestion, config))
  if (suggestion === undefined || json || !process.stdin.isTTY || !process.stderr.isTTY) return refuse()
  const argv = [...parts.slice(k), ...(options.argv ?? [])]
  const {ask} = await import('./terminal/prompt.js')
  const meant = toConfiguredId(suggestion, config)
  if (!(await ask(`${typed} is not a ${config.bin} command. Did you mean ${meant}?`, process.stderr))) return refuse()
  if (!leaveLiveStateAlone.has(suggestion) && !isDryRun(argv, config.findCommand(suggestion)?.flags)) {
    const line = [config.bin, meant, ...argv].join(' ')
    if (!(await ask(`${line} can change live state. Run exactly that?`, process.stderr))) return refuse()
  }
  return config.runCommand(suggestion, argv)
}

/**
 * Whether the command line is a rehearsal: `--dry-run` given (before any `--`) to a command that
 * takes it, which then changes no live state, so a guess at it needs no second yes.
 */
export function isDryRun(argv: string[], flags: Record<string, unknown> | undefined): boolean {
  const ends = argv.indexOf('--')
  return flags !== undefined && 'dry-run' in flags && (ends === -1 ? argv : argv.slice(0, ends)).includes('--dry-run')
}

export default commandNotFound
