import {closeSync, openSync} from 'node:fs'
import {isatty} from 'node:tty'
import {exitCodeOf} from './exit-codes.js'

/**
 * The signals that stop a run at its next safe point: Ctrl-C, SIGTERM (what `kill`, CI runners
 * and container stops send) and SIGHUP (a closed terminal or a dropped SSH session), each of which
 * otherwise ends the process at once, with the weights unjudged, the locks held, or the processes
 * a drill started still running.
 */
const stopSignals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const

/**
 * What a write reports once nobody can read it: the terminal went away (EIO; ENXIO for a tty
 * whose other side is gone), the pipe's reader did (EPIPE), or the stream was already torn down.
 */
const lostCodes = new Set(['EIO', 'EPIPE', 'ENXIO', 'ERR_STREAM_DESTROYED'])

let watching = false
let terminalLost = false
const onLost = new Set<(what: string) => void>()

/**
 * Makes a lost terminal a stop rather than a crash; once per process, before anything writes. From
 * the first write that cannot be made on stdout or stderr, every write there is dropped, and the
 * loss is told once to whoever holds the stop signals (`onStopSignals`). With nobody holding them,
 * the command ends at once, as SIGHUP ends it, but with the exit code it has so far (0 unless it
 * set one): nothing it says can be read any more (`watch` would follow its run for an hour unseen),
 * and `sluice journal RUN | head` has always exited 0 (oclif lets EPIPE on stdout pass), which a
 * script under `set -o pipefail` relies on.
 */
export function watchForLostTerminal(): void {
  if (watching) return
  watching = true
  dropOnceLost(process.stdout, 'stdout')
  dropOnceLost(process.stderr, 'stderr')
  letGoOfHungUpTerminals()
}

type Done = (error?: Error | null) => void

// Taken where the write completes, not as an 'error' event: that event also tears the stream down,
// and oclif's own listener on stdout rethrows every write error but EPIPE, so EIO would still crash.
function dropOnceLost(stream: NodeJS.WriteStream, name: string): void {
  let lost = false
  const settle = (done: Done) => (error?: NodeJS.ErrnoException | null) => {
    const code = error?.code
    if (code === undefined || !lostCodes.has(code)) return done(error)
    lost = true
    done()
    lose(`${code} on ${name}`)
  }
  const write = stream._write.bind(stream)
  stream._write = (chunk, encoding, done) => (lost ? done() : write(chunk, encoding, settle(done)))
  const writev = stream._writev?.bind(stream)
  if (writev) stream._writev = (chunks, done) => (lost ? done() : writev(chunks, settle(done)))
}

/**
 * Node (20) puts each terminal it started on back as it found it when it exits, and aborts (134)
 * when that fails, as it does on a terminal that hung up: after a clean stop, on SIGHUP as on a lost
 * terminal. A descriptor that is no longer the one it started with is left alone, so each hung-up
 * terminal is swapped for /dev/null on the way out (not closed: the next file opened would take its
 * number, and anything Node still says would go into that file).
 */
function letGoOfHungUpTerminals(): void {
  if (process.platform === 'win32') return
  const terminals = [0, 1, 2].filter((fd) => isatty(fd))
  process.on('exit', () => {
    for (const fd of terminals) {
      if (isatty(fd)) continue
      closeSync(fd)
      const reopened = openSync('/dev/null', 'r+')
      if (reopened !== fd) closeSync(reopened)
    }
  })
}

/**
 * A question read from a terminal that hangs up: readline, closing on the input's end, puts the
 * terminal back out of raw mode, which fails (EIO) on a terminal that is gone and, thrown from
 * inside readline, ended the process at once, leaving the locks the question was asked under. That
 * failure is the terminal lost, told as any other loss; the question then ends unanswered.
 */
export function tolerateHungUpInput(input: NodeJS.ReadableStream): void {
  const tty = input as Partial<NodeJS.ReadStream>
  if (!tty.isTTY || typeof tty.setRawMode !== 'function' || (tty as {hungUpTolerated?: boolean}).hungUpTolerated) return
  const setRawMode = tty.setRawMode.bind(tty)
  Object.assign(tty, {
    hungUpTolerated: true,
    setRawMode(mode: boolean) {
      try {
        return setRawMode(mode)
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code
        if (code === undefined || !lostCodes.has(code)) throw error
        lose(`${code} on stdin`)
        return tty
      }
    },
  })
}

function lose(what: string): void {
  if (terminalLost) return
  terminalLost = true
  // Told once the failed write has returned: a stop said from inside a renderer's own write could
  // draw into it again, half done.
  process.nextTick(() => {
    if (onLost.size === 0) process.exit()
    for (const listener of onLost) listener(what)
  })
}

/**
 * Listens for the stop signals: the first aborts the returned signal, after saying `stopping` (what
 * happens now); a second one, of any of them, quits at once. A lost terminal (`watchForLostTerminal`)
 * is a SIGHUP that no one sent. Install it before anything draws (listr2's cursor handling
 * re-raises SIGINT when it is alone), and call `release` when done.
 */
export function onStopSignals(note: (text: string) => void, stopping: string): {signal: AbortSignal; release: () => void} {
  const controller = new AbortController()
  let interrupts = 0
  let hungUp = false
  const stop = (what: string, again: string) => {
    interrupts++
    if (interrupts > 1) process.exit(exitCodeOf('interrupted'))
    note(`${what}: ${stopping}${again}`)
    controller.abort()
  }
  const onSignal = (signal: NodeJS.Signals) => {
    // A dropped SSH session both hangs up and takes the terminal away: one stop, not two.
    if (signal === 'SIGHUP' && hungUp) return
    stop(signal === 'SIGINT' ? 'interrupt' : signal, ' (Ctrl-C again to quit at once)')
  }
  const onTerminalLost = (what: string) => {
    // Nobody is there to have asked twice: after a signal, the loss is that signal's own terminal.
    if (interrupts > 0) return
    hungUp = true
    stop(`terminal lost (${what})`, '')
  }
  for (const signal of stopSignals) process.on(signal, onSignal)
  onLost.add(onTerminalLost)
  return {
    signal: controller.signal,
    release: () => {
      stopSignals.forEach((signal) => process.off(signal, onSignal))
      onLost.delete(onTerminalLost)
    },
  }
}
