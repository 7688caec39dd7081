/**
 * The most of one answer sluice reads from anything it asks over the network (HAProxy's Runtime
 * API, a Prometheus server): far above the biggest `show stat` of a real HAProxy or the biggest
 * range query sluice asks Prometheus (2,000 points of one series is some 60 KB), far below what
 * would threaten the heap. An endpoint that streams without end, or answers a gigabyte, is cut off
 * here instead of growing sluice until V8 dies (a Prometheus answer once grew it to 6.4 GB).
 */
export const maxAnswerBytes = 16 * 1024 * 1024

/** How an error says the cap was hit: the caller adds whose answer and to what. */
export const overCap = (maxBytes = maxAnswerBytes): string => `answered more than ${maxBytes / 1024 / 1024} MiB; sluice stopped reading`

/**
 * An answer collected chunk by chunk as it arrives, never past `maxBytes`: `add` says false once
 * the cap is passed, and the caller stops reading (and drops what it has) rather than buffering on.
 */
export class BoundedAnswer {
  private readonly chunks: Uint8Array[] = []
  private received = 0

  constructor(readonly maxBytes = maxAnswerBytes) {}

  /** Keeps a chunk; false (and the chunk not kept) once the answer is past the cap. */
  add(chunk: Uint8Array): boolean {
    this.received += chunk.byteLength
    if (this.received > this.maxBytes) {
      this.chunks.length = 0
      return false
    }
    this.chunks.push(chunk)
    return true
  }

  /** The answer as UTF-8 text. */
  text(): string {
    return Buffer.concat(this.chunks).toString('utf8')
  }
}

/** The cap was passed: the answer was dropped and the stream cancelled. */
export class AnswerTooLong extends Error {
  constructor(readonly maxBytes: number) {
    super(overCap(maxBytes))
  }
}

/**
 * Reads a fetch answer's body as text, streamed and never past `maxBytes`: past it the body is
 * cancelled (the connection let go) and AnswerTooLong thrown. The caller's deadline and signal,
 * given to fetch, end a body that trickles: its read then rejects with the abort.
 */
export async function readBoundedBody(body: ReadableStream<Uint8Array> | null, maxBytes = maxAnswerBytes): Promise<string> {
  if (body === null) return ''
  const answer = new BoundedAnswer(maxBytes)
  const reader = body.getReader()
  try {
    for (;;) {
      const {done, value} = await reader.read()
      if (done) return answer.text()
      if (!answer.add(value)) {
        await reader.cancel().catch(() => undefined)
        throw new AnswerTooLong(maxBytes)
      }
    }
  } finally {
    reader.releaseLock()
  }
}
