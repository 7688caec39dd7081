import {spawn} from 'node:child_process'
import {expect} from 'vitest'
import {runJs} from './cli.js'

/**
 * Runs sluice in a pseudo-terminal (util-linux `script`), 50 rows by 200 columns, answers its first
 * `(y/N)` question with `answer` if given, and returns what the terminal showed, with the escape
 * codes taken out.
 */
export function inTerminal(args: string[], env: Record<string, string>, answer?: string): Promise<{code: number | null; screen: string}> {
  const command = [process.execPath, runJs, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ')
  const child = spawn('script', ['-qec', `stty rows 50 cols 200; ${command}`, '/dev/null'], {
    env: {...process.env, ...env, NO_COLOR: '1', CI: ''},
    stdio: ['pipe', 'pipe', 'pipe'],
  })
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

/** What a terminal shows must come in order (the plan, then what is true now, then the question): each text on the screen, after the one before. */
export function expectInOrder(screen: string, texts: string[]): void {
  const at = texts.map((text) => {
    const i = screen.indexOf(text)
    expect(i, `${text} in:\n${screen}`).toBeGreaterThanOrEqual(0)
    return i
  })
  for (let k = 1; k < at.length; k++) expect(at[k - 1], `${texts[k - 1]} before ${texts[k]}`).toBeLessThan(at[k])
}

/** A terminal's output without escape codes and carriage returns. */
export const plainScreen = (text: string): string => text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\r/g, '')

/** sluice running in a pseudo-terminal, as spawnRun in test/aws/spawned-run.ts is without one. */
export interface TerminalRun {
  /** What the terminal has shown so far, escape codes taken out. */
  screen(): string
  ended: Promise<{code: number | null; screen: string}>
  kill(signal: NodeJS.Signals): void
  /** Types into the terminal, as a person at its keyboard. */
  type(text: string): void
}

/** Starts sluice in a pseudo-terminal (as inTerminal does) and hands it back while it runs. */
export function spawnInTerminal(args: string[], env: Record<string, string>): TerminalRun {
  const command = [process.execPath, runJs, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ')
  // exec: the signal a test sends reaches sluice itself, not the shell script runs it from.
  const child = spawn('script', ['-qec', `stty rows 50 cols 200; exec ${command}`, '/dev/null'], {
    env: {...process.env, ...env, NO_COLOR: '1', CI: ''},
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let screen = ''
  child.stdout.on('data', (d) => (screen += d))
  const ended = new Promise<{code: number | null; screen: string}>((resolve) => child.on('close', (code) => resolve({code, screen: plainScreen(screen)})))
  return {screen: () => plainScreen(screen), ended, kill: (signal) => child.kill(signal), type: (text) => void child.stdin.write(text)}
}
