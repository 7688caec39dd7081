import {timingSafeEqual} from 'node:crypto'
import {readFileSync} from 'node:fs'
import {createServer, type IncomingMessage, type ServerResponse} from 'node:http'
import type {AddressInfo} from 'node:net'
import {join} from 'node:path'
import {RefusedError} from '../errors.js'
import {escapeControls} from '../input/terminal-safe.js'
import {controlKinds, type ControlKind} from '../ports/controls.js'
import {RUN_ID_PATTERN, type StateStore} from '../ports/state-store.js'
import {sendControl} from '../state/controls.js'
import {thisHost} from '../state/journal.js'
import {chartLook, lookCss} from '../report/look.js'
import {BoardReader} from './board.js'
import {predictApart, type Prediction} from './prediction.js'
import {viewKeeps} from './run-view.js'

// `sluice serve`: one page over the state store every command uses, for the incident bridge. Node's
// own http: the page needs four JSON reads, two event streams and one POST, which no framework
// makes shorter, and a server with no dependency is one less thing to trust on a bastion host.

export interface ServeOptions {
  store: StateStore
  /** Where to listen: loopback unless told otherwise. */
  host: string
  port: number
  /** Whether the page may send controls (pause, promote, abort), each with the token. */
  controls: boolean
  /** The token controls need, and every read too when the server listens beyond loopback. */
  token: string
  /** The folder of the page's own files (index.html, app.js, app.css); its look comes from src/report/look.ts. */
  assets: string
  /** How often a stream looks at the store for new entries, ms. */
  pollMs?: number
}

export interface Serving {
  url: string
  close(): Promise<void>
}

const loopbackHosts = new Set(['127.0.0.1', '::1', 'localhost'])

/** What every answer carries: nothing from elsewhere, no inline script, no framing, no referrer. */
const securityHeaders = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
}

const assetTypes: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
  'look.css': 'text/css; charset=utf-8',
  'look.json': 'application/json; charset=utf-8',
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message)
  }
}

/** Starts the server; resolves once it listens, with its address. */
export async function serve(options: ServeOptions): Promise<Serving> {
  const reader = new BoardReader(options.store)
  const pollMs = options.pollMs ?? 250
  const loopback = loopbackHosts.has(options.host)
  const assets = new Map(['index.html', 'app.js', 'app.css'].map((name) => [name, readFileSync(join(options.assets, name))]))
  // The look every page of sluice shares: the reports carry the same stylesheet, and draw with the same dashes and glyphs.
  assets.set('look.css', Buffer.from(lookCss()))
  assets.set('look.json', Buffer.from(JSON.stringify(chartLook())))
  const streams = new Set<ServerResponse>()
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      const status = error instanceof HttpError ? error.status : error instanceof RefusedError ? 409 : 500
      if (!res.headersSent) send(res, status, {error: (error as Error).message})
      else res.end()
    })
  })

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://sluice')
    checkHost(req)
    const path = url.pathname
    if (req.method === 'GET' && !path.startsWith('/api/')) {
      const name = path === '/' ? 'index.html' : path.slice(1)
      const body = assets.get(name)
      if (!body) throw new HttpError(404, `no such page: ${path}`)
      res.writeHead(200, {...securityHeaders, 'content-type': assetTypes[name], 'cache-control': 'no-cache'})
      res.end(body)
      return
    }
    // Beyond loopback anyone on the network could read the journals: every read needs the token too.
    if (!loopback) checkToken(req)
    if (req.method === 'GET' && path === '/api/board') return send(res, 200, {...(await reader.board()), controls: options.controls})
    // The list reads every journal in the store: looked at once a second, not at a run's pace.
    if (req.method === 'GET' && path === '/api/board/events') return stream(req, res, boardMessage, Math.max(pollMs, 1000))
    const run = /^\/api\/runs\/([^/]+)(\/events|\/control|\/prediction)?$/.exec(path)
    if (run) {
      const runId = decodeURIComponent(run[1])
      if (!RUN_ID_PATTERN.test(runId)) throw new HttpError(404, 'no such run')
      if (req.method === 'GET' && run[2] === undefined) return send(res, 200, await reader.run(runId))
      if (req.method === 'GET' && run[2] === '/events') return stream(req, res, (sent: {seq: number; rest: string} | null) => runMessage(runId, sent))
      if (req.method === 'GET' && run[2] === '/prediction') return send(res, 200, await prediction(runId))
      if (req.method === 'POST' && run[2] === '/control') return control(req, res, runId)
    }
    throw new HttpError(404, `no such page: ${req.method} ${path}`)
  }

  /**
   * A browser on the bridge reaches the server by an address it typed; a page on another site
   * that resolves its own name to 127.0.0.1 (DNS rebinding) sends its own name as the Host, and
   * is refused before it reads a journal.
   */
  function checkHost(req: IncomingMessage): void {
    if (!loopback) return
    const host = (req.headers.host ?? '').replace(/:\d+$/, '').replace(/^\[(.*)\]$/, '$1')
    if (!loopbackHosts.has(host)) throw new HttpError(403, `this server answers requests for the loopback address only, not for ${JSON.stringify(host)}`)
  }

  function checkToken(req: IncomingMessage): void {
    const given = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1] ?? ''
    const a = Buffer.from(given)
    const b = Buffer.from(options.token)
    if (a.length !== b.length || !timingSafeEqual(a, b)) throw new HttpError(401, 'the token printed when `sluice serve` started is needed for this')
  }

  /**
   * An event stream: its first message at once, then each one `next` makes from what was sent
   * last (null when nothing changed), looked at every `every` ms. A page that reconnects (the
   * server or the run restarted) is sent its first message again, whole, and shows no row twice.
   */
  async function stream<S>(
    req: IncomingMessage,
    res: ServerResponse,
    next: (sent: S | null) => Promise<{message: object; id?: number; sent: S} | null>,
    every = pollMs,
  ): Promise<void> {
    // Made before the stream opens, so a run that is not there is answered as an error.
    const first = await next(null)
    res.writeHead(200, {...securityHeaders, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive'})
    streams.add(res)
    let open = true
    let sent: S | null = null
    const push = (out: {message: object; id?: number; sent: S} | null) => {
      if (!out) return
      sent = out.sent
      res.write(`${out.id === undefined ? '' : `id: ${out.id}\n`}retry: 1000\ndata: ${JSON.stringify(out.message)}\n\n`)
    }
    push(first)
    let quiet = 0
    req.on('close', () => {
      open = false
      streams.delete(res)
    })
    while (open) {
      await new Promise((resolve) => setTimeout(resolve, every))
      if (!open) break
      // A page that cannot keep up (a slow screen, a busy browser) is not sent more until it has
      // taken what it was sent: what changed meanwhile goes in one message, not a queue in memory.
      if (res.writableNeedDrain) continue
      try {
        push(await next(sent))
      } catch (error) {
        res.write(`event: trouble\ndata: ${JSON.stringify({error: (error as Error).message})}\n\n`)
      }
      // A comment now and then keeps proxies from closing a quiet stream.
      quiet += every
      if (quiet >= 15_000) {
        res.write(': still here\n\n')
        quiet = 0
      }
    }
  }

  /** The list, whole, whenever it changes. */
  async function boardMessage(sent: string | null) {
    const text = JSON.stringify({...(await reader.board()), controls: options.controls})
    return text === sent ? null : {message: JSON.parse(text) as object, sent: text}
  }

  /**
   * A run's page: whole at first, then what changed. Its growing parts (lines, verdicts, changes,
   * weights, controls, placements) are sent as those the entries after the last one sent
   * (`since`) added or touched; the rest whole; and nothing while nothing moved.
   */
  async function runMessage(runId: string, sent: {seq: number; rest: string} | null) {
    const view = await reader.run(runId)
    const rest = JSON.stringify({...view, lines: [], verdicts: [], changes: [], weights: [], controls: [], placements: []})
    if (sent && sent.seq === view.lastSeq && sent.rest === rest) return null
    const since = sent && sent.seq <= view.lastSeq ? sent.seq : 0
    const after = <T extends {seq: number}>(rows: T[]): T[] => rows.filter((r) => r.seq > since)
    const message =
      since === 0
        ? {...view, since, keep: viewKeeps}
        : {
            ...view,
            since,
            lines: after(view.lines),
            verdicts: after(view.verdicts),
            changes: view.changes.filter((c) => c.touched > since),
            weights: after(view.weights),
            controls: after(view.controls),
            placements: after(view.placements),
          }
    return {message, id: view.lastSeq, sent: {seq: view.lastSeq, rest}}
  }

  /** The rehearsal of a run's runbook from its start: once per run, however many pages ask. */
  const predictions = new Map<string, Promise<Prediction>>()
  function prediction(runId: string): Promise<Prediction> {
    let p = predictions.get(runId)
    if (!p) {
      p = options.store.read(runId).then(
        (read) => predictApart(read),
        (error: Error) => ({none: error.message}),
      )
      p = p.catch((error: Error) => ({none: `the rehearsal failed: ${error.message}`}))
      predictions.set(runId, p)
    }
    return p
  }

  /** A control from the page, through the same path as `sluice pause`/`promote`/`abort`, in the name the page gives. */
  async function control(req: IncomingMessage, res: ServerResponse, runId: string): Promise<void> {
    if (!options.controls) throw new HttpError(403, 'this page is read-only: start `sluice serve --controls` to steer runs from it')
    checkToken(req)
    const body = await readJson(req)
    const kind = body.kind as ControlKind
    if (!controlKinds.includes(kind)) throw new HttpError(400, `kind: expected one of ${controlKinds.join(', ')}`)
    const operator = typeof body.operator === 'string' ? escapeControls(body.operator.trim()).slice(0, 64) : ''
    if (!operator) throw new HttpError(400, 'operator: give the name the journal records this control under')
    const sent = await sendControl(options.store, runId, kind, {operator, host: `${thisHost} (sluice serve)`, pid: process.pid}, () => undefined, {
      ...(body.rollback === true && kind === 'abort' ? {rollback: true} : {}),
      ...(body.full === true && kind === 'promote' ? {full: true} : {}),
    })
    send(res, 200, sent)
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port, options.host, () => resolve())
  })
  const {port} = server.address() as AddressInfo
  const shown = options.host.includes(':') ? `[${options.host}]` : options.host
  return {
    url: `http://${shown}:${port}/`,
    close: () =>
      new Promise((resolve) => {
        for (const res of streams) res.end()
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}

function send(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, {...securityHeaders, 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store'})
  res.end(JSON.stringify(body))
}

/** A small JSON body: a control is a few fields. */
async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  if (!(req.headers['content-type'] ?? '').startsWith('application/json')) throw new HttpError(415, 'expected a JSON body (content-type: application/json)')
  let text = ''
  for await (const chunk of req) {
    text += String(chunk)
    if (text.length > 4096) throw new HttpError(413, 'a control is a few fields; this body is too large')
  }
  try {
    const value: unknown = JSON.parse(text)
    if (typeof value === 'object' && value !== null && !Array.isArray(value)) return value as Record<string, unknown>
  } catch {
    // said below
  }
  throw new HttpError(400, 'expected a JSON object')
}
