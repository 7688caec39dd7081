export type TerminalMode = 'tty' | 'lines' | 'silent'

/**
 * Under --json: silent, except a live run's progress, which stays on stderr as lines (the run id,
 * the plan, lock waits, every change), since a script's log is where someone looks when the
 * result says it stopped. Else one line per event when stderr is not a terminal or under CI; else live.
 */
export function chooseMode(opts: {json: boolean; live?: boolean; env?: NodeJS.ProcessEnv; isTTY?: boolean}): TerminalMode {
  if (opts.json) return opts.live ? 'lines' : 'silent'
  const isTTY = opts.isTTY ?? process.stderr.isTTY === true
  if (!isTTY || isCI(opts.env ?? process.env)) return 'lines'
  return 'tty'
}

/** CI=false and an empty CI are how people turn it off, not a CI system. */
function isCI(env: NodeJS.ProcessEnv): boolean {
  const ci = env.CI
  return ci !== undefined && ci !== '' && ci.toLowerCase() !== 'false'
}
