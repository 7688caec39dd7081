export type TerminalMode = 'tty' | 'lines' | 'silent'

/** Silent under --json; one line per event when stderr is not a terminal or under CI; else live. */
export function chooseMode(opts: {json: boolean; env?: NodeJS.ProcessEnv; isTTY?: boolean}): TerminalMode {
  if (opts.json) return 'silent'
  const isTTY = opts.isTTY ?? process.stderr.isTTY === true
  if (!isTTY || isCI(opts.env ?? process.env)) return 'lines'
  return 'tty'
}

/** CI=false and an empty CI are how people turn it off, not a CI system. */
function isCI(env: NodeJS.ProcessEnv): boolean {
  const ci = env.CI
  return ci !== undefined && ci !== '' && ci.toLowerCase() !== 'false'
}
