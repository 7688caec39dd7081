import {readFileSync} from 'node:fs'

// What the drill's child programs (fleet-main, load-generator-main) share: their --config argument, and
// how they follow the drill that started them to its end.

/** Exits 2 with one line on stderr, named by the program. */
export function fail(program: string, message: string): never {
  process.stderr.write(`${program}: ${message}\n`)
  process.exit(2)
}

/** The JSON config `--config FILE` names; a missing flag or unreadable JSON exits 2 naming it. */
export function readConfig<T>(program: string, what: string): {config: T; file: string} {
  const args = process.argv.slice(2)
  const at = args.indexOf('--config')
  if (at < 0 || args[at + 1] === undefined) fail(program, `expected --config FILE (${what} as JSON)`)
  const file = args[at + 1]
  try {
    return {config: JSON.parse(readFileSync(file, 'utf8')) as T, file}
  } catch (error) {
    fail(program, `--config ${file}: ${(error as Error).message}`)
  }
}

/**
 * Calls `end` on SIGINT or SIGTERM and, with --exit-on-stdin-end, when stdin closes: how a child
 * follows a parent that died without a word (kill -9 included).
 */
export function endOnSignalsOrStdin(end: () => void): void {
  process.on('SIGINT', end)
  process.on('SIGTERM', end)
  if (process.argv.slice(2).includes('--exit-on-stdin-end')) {
    process.stdin.on('end', end)
    process.stdin.on('error', end)
    process.stdin.resume()
  }
}
