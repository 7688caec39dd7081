/**
 * A rehearsal drawn on a terminal against the same rehearsal piped: `npm run bench:terminal` (and
 * `npm run bench`, among the rest). The terminal is a pseudo-terminal of 160×50 from util-linux's
 * `script`; the piped run goes through `script` too, its output into `cat`, so both pay the same
 * for `script` and differ only in where sluice's stderr and stdout go. Printed as JSON lines like
 * bench/figures.ts; compare the ratio, which is measured in the same run.
 */
import {spawnSync} from 'node:child_process'
import {join} from 'node:path'
import {pathToFileURL} from 'node:url'
import {packageRoot} from '../src/package-root.js'

function emit(name: string, value: number, unit: string): void {
  process.stdout.write(`${JSON.stringify({name, value: Number(value.toPrecision(4)), unit})}\n`)
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`

/** Milliseconds for one shell command under `script`, which gives it a pseudo-terminal. */
function underScript(command: string): number {
  const start = process.hrtime.bigint()
  // CI set would make sluice print lines even on a terminal (src/cli/terminal/mode.ts).
  const result = spawnSync('script', ['-qfec', command, '/dev/null'], {stdio: ['ignore', 'ignore', 'pipe'], env: {...process.env, CI: '', NO_COLOR: ''}})
  if (result.error) throw result.error
  if (result.status !== 0) throw new Error(`${command} exited ${result.status}: ${result.stderr.toString()}`)
  return Number(process.hrtime.bigint() - start) / 1e6
}

export function terminalRendering(runs = 7): void {
  if (spawnSync('script', ['--version']).error) {
    process.stderr.write('bench: no `script` (util-linux) here: the terminal figures are left out\n')
    return
  }
  const sluice = `${quote(process.execPath)} ${quote(join(packageRoot, 'bin', 'run.js'))} run outlook-staged-return --dry-run`
  const tty = `stty cols 160 rows 50; ${sluice}`
  const piped = `${sluice} 2>&1 | cat`
  const drawn: number[] = []
  const plain: number[] = []
  // Taken in turns, so a neighbour's load falls on both alike.
  for (let i = 0; i < runs; i++) {
    drawn.push(underScript(tty))
    plain.push(underScript(piped))
  }
  emit('terminal.run-outlook-staged-return-dry-run.tty.median', median(drawn), 'ms')
  emit('terminal.run-outlook-staged-return-dry-run.piped.median', median(plain), 'ms')
  emit('terminal.run-outlook-staged-return-dry-run.tty-to-piped', median(drawn) / median(plain), 'x')
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) terminalRendering()
