import {connect, type Socket} from 'node:net'
import {escapeControls} from '../input/terminal-safe.js'
import {BoundedAnswer, maxAnswerBytes, overCap} from '../input/bounded-answer.js'
import {FailedError} from '../errors.js'
import {parseAddress, type RuntimeAddress} from '../input/address.js'

/** How long one Runtime API command may take, connect included, unless the caller says otherwise. */
export const runtimeDeadlineMs = 5000

/** A Runtime API command HAProxy answered with an error, or that never got an answer. */
export class RuntimeError extends FailedError {
  constructor(
    readonly socket: string,
    readonly command: string,
    detail: string,
  ) {
    super(`haproxy runtime API at ${socket}: \`${command}\` ${detail}`)
  }
}

/** The most of one answer sluice reads (src/input/bounded-answer.ts): far above the biggest `show stat` or `show map` of a real HAProxy. */
export {maxAnswerBytes}

/**
 * HAProxy's Runtime API (the `stats socket`). One command per connection, which HAProxy closes
 * after answering: no prompt-mode state to get out of step, and a command that fails leaves no
 * half-read answer behind for the next one. Answers are text; HAProxy reports errors as text
 * too, never as a status, so callers that change something use `change`, which treats any answer
 * as a refusal (every change command sluice sends answers nothing when it succeeds).
 */
export class RuntimeApi {
  readonly address: RuntimeAddress
  readonly label: string

  constructor(
    address: string,
    private readonly deadlineMs = runtimeDeadlineMs,
  ) {
    this.address = parseAddress(address)
    this.label = this.address.kind === 'unix' ? this.address.path : `${this.address.host}:${this.address.port}`
  }

  /** Sends one command and returns HAProxy's whole answer. Throws only when there is no answer. */
  send(command: string, signal?: AbortSignal): Promise<string> {
    if (/[\n;]/.test(command)) return Promise.reject(new RuntimeError(this.label, command, 'was not sent: one command at a time, without newlines or ";"'))
    if (signal?.aborted) return Promise.reject(new RuntimeError(this.label, command, 'was not sent: the run was interrupted'))
    return new Promise((resolve, reject) => {
      const answer = new BoundedAnswer(maxAnswerBytes)
      let settled = false
      const socket: Socket = this.address.kind === 'unix' ? connect(this.address.path) : connect(this.address.port, this.address.host)
      const finish = (error: Error | null, text?: string) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        signal?.removeEventListener('abort', onAbort)
        socket.destroy()
        if (error) reject(error)
        else resolve(text!)
      }
      const onAbort = () => finish(new RuntimeError(this.label, command, 'was stopped by the interrupt; it may or may not have been applied'))
      signal?.addEventListener('abort', onAbort, {once: true})
      const timer = setTimeout(() => finish(new RuntimeError(this.label, command, `had no answer within ${this.deadlineMs / 1000} s`)), this.deadlineMs)
      socket.on('connect', () => socket.end(`${command}\n`))
      socket.on('data', (chunk: Buffer) => {
        // No answer sluice asks for comes near the cap; a socket that streams for ever must not fill the heap.
        if (!answer.add(chunk))
          finish(new RuntimeError(this.label, command, `${overCap(maxAnswerBytes)} (no answer it asks for is that long: is this HAProxy's stats socket?)`))
      })
      // What HAProxy says may reach a terminal: its control characters are written out.
      socket.on('end', () => finish(null, escapeControls(answer.text())))
      socket.on('error', (error: NodeJS.ErrnoException) => finish(this.connectError(command, error)))
    })
  }

  /**
   * Sends a command that changes something and answers nothing when it succeeds; any answer is
   * HAProxy refusing it, and becomes an error naming `resource` with HAProxy's own words.
   */
  async change(command: string, resource: string, signal?: AbortSignal): Promise<void> {
    const answer = (await this.send(command, signal)).trim()
    if (answer !== '') throw new RuntimeError(this.label, command, `was refused for ${resource}: ${oneLine(answer)}`)
  }

  private connectError(command: string, error: NodeJS.ErrnoException): Error {
    const where = this.address.kind === 'unix' ? `stats socket ${this.address.path} level admin` : `stats socket ${this.label} level admin`
    switch (error.code) {
      case 'ENOENT':
        return new FailedError(`haproxy runtime API at ${this.label}: no such socket (is HAProxy running with \`${where}\`?)`)
      case 'ECONNREFUSED':
        return new FailedError(`haproxy runtime API at ${this.label}: connection refused (is HAProxy running with \`${where}\`?)`)
      case 'EACCES':
        return new FailedError(`haproxy runtime API at ${this.label}: permission denied (the socket's mode and owner must let this user in)`)
      default:
        return new RuntimeError(this.label, command, `failed: ${error.code ?? ''} ${error.message}`.replace(/\s+/g, ' '))
    }
  }
}

/** HAProxy's multi-line answers (a usage text, say) as one line for an error. */
export function oneLine(text: string): string {
  const lines = text
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
  const first = lines[0] ?? ''
  return lines.length > 1 ? `${first} (…)` : first
}
