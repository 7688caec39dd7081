import {Writable} from 'node:stream'
import {tolerateHungUpInput} from '../stop-signals.js'

// @inquirer/prompts and listr2 are loaded only when a question is asked: --json and CI runs never
// pay for them, hence the dynamic import and the type-only listr2 parameter below.

/**
 * Inquirer pipes its output through a legacy Stream, which ends the destination when the prompt
 * is done unless that is process.stdout/stderr; a caller's stream must outlive one question.
 */
export function unendable(stream: NodeJS.WritableStream): NodeJS.WritableStream {
  const out = new Writable({
    write(chunk, _encoding, done) {
      stream.write(chunk as Buffer)
      done()
    },
  })
  // readline wraps the prompt to the terminal it draws on.
  const tty = stream as Partial<NodeJS.WriteStream>
  Object.defineProperties(out, {
    columns: {get: () => tty.columns},
    rows: {get: () => tty.rows},
    isTTY: {get: () => tty.isTTY},
  })
  return out
}

export async function ask(question: string, output: NodeJS.WritableStream, input?: NodeJS.ReadableStream, signal?: AbortSignal): Promise<boolean> {
  const {confirm} = await import('@inquirer/prompts')
  // A terminal that hangs up under the question makes its reads fail (EIO) or end: nobody can
  // answer any more. Unheard, that error ended the process at once, leaving the locks the question
  // was asked under; it withdraws the question instead, as no, so the command lets go of them.
  const from = input ?? process.stdin
  tolerateHungUpInput(from)
  const gone = new AbortController()
  const hungUp = () => gone.abort()
  from.on('error', hungUp)
  from.on('end', hungUp)
  const withdrawn = signal ? AbortSignal.any([signal, gone.signal]) : gone.signal
  try {
    return await confirm({message: question, default: false}, {output, ...(input ? {input} : {}), signal: withdrawn})
  } catch (error) {
    // Ctrl-C at a prompt never reaches the engine's SIGINT handler (readline holds stdin in raw
    // mode and inquirer turns the keypress into ExitPromptError): it means no.
    // A prompt withdrawn by its signal (answered elsewhere, e.g. by `sluice promote`) is no answer here.
    if (error instanceof Error && (error.name === 'ExitPromptError' || error.name === 'AbortPromptError')) return false
    throw error
  } finally {
    from.off('error', hungUp)
    from.off('end', hungUp)
  }
}

/**
 * listr2's prompt protocol: while the task is in the PROMPT state the default renderer draws the
 * last frame the prompt wrote to `task.stdout(PROMPT)` under the task list, so spinner redraws
 * repaint the question instead of erasing it. The class needs listr2 at runtime, hence a factory.
 */
export function confirmAdapter(m: typeof import('listr2')) {
  return class ConfirmAdapter extends m.ListrPromptAdapter {
    async run<T>(prompt: (output: NodeJS.WritableStream) => Promise<T>): Promise<T> {
      this.reportStarted()
      try {
        return await prompt(this.wrapper.stdout(m.ListrTaskEventType.PROMPT))
      } finally {
        // Even when the prompt was aborted (which the caller reads as no): a failed prompt would
        // stay drawn until the step ends.
        this.reportCompleted()
      }
    }
  }
}
