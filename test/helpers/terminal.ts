import {spawn} from 'node:child_process'
import {runJs} from './cli.js'

/**
 * Runs sluice in a pseudo-terminal (util-linux `script`), 50 rows by 200 columns, answers its first
 * `(y/N)` question with `answer` if given, and returns what the terminal showed, with the escape
 * codes taken out.
 */
export function inTerminal(args: string[], env: Record<string, string>, answer?: string): Promise<{code: number | null; screen: string}> {
  const command = [process.execPath, runJs, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ')
  const child = spawn('script', ['-qec', `stty rows 50 cols 200; ${command}`, '/dev/null'], {env: {...process.env, ...env, NO_COLOR: '1', CI: ''}, stdio: ['pipe', 'pipe', 'pipe']})
  let screen = ''
  let answered = false
  child.stdout.on('data', (d) => {
    screen += d
    if (answer !== undefined && !answered && /\? .*\(y\/N\)/.test(screen)) {
      answered = true
      child.stdin.write(answer)
    }
  })
  return new Promise((resolve) => child.on('close', (code) => resolve({code, screen: plainScreen(screen)})))
}

/** A terminal's output without escape codes and carriage returns. */
export const plainScreen = (text: string): string => text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r/g, '')
