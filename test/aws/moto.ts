import {spawn, type ChildProcess} from 'node:child_process'
import {accessSync, constants} from 'node:fs'
import {createServer} from 'node:net'
import {delimiter, join} from 'node:path'

// Lives here rather than in global-setup.ts so every test file that imports this module sees the type.
declare module 'vitest' {
  export interface ProvidedContext {
    /** Base URL of the moto_server shared by the whole run, e.g. http://127.0.0.1:41234 */
    motoEndpoint: string
  }
}

const HOST = '127.0.0.1'
const REGION = 'us-east-1'
const READY_TIMEOUT_MS = 20_000
const KILL_GRACE_MS = 3_000
// Enough of moto's log to explain a failed start without holding a whole run's request log in memory.
const LOG_LIMIT = 64 * 1024

export const INSTALL_HINT = "moto_server is not on PATH. Install it with: pip install 'moto[server]'"

export interface Moto {
  endpoint: string
  stop: () => Promise<void>
}

/** What in-test SDK v3 clients need to reach moto; spread it into any client's constructor. */
export interface AwsClientConfig {
  endpoint: string
  region: string
  credentials: {accessKeyId: string; secretAccessKey: string}
}

/**
 * Starts a private moto_server on a free loopback port and waits until it answers.
 * The server is shared state: callers in parallel workers must use unique resource names.
 */
export async function startMoto(): Promise<Moto> {
  const bin = findOnPath('moto_server')
  if (!bin) throw new Error(INSTALL_HINT)

  // Another process can grab the port between our probe and moto's bind, so a lost race gets a fresh port.
  let lastError: unknown
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort()
    try {
      return await launch(bin, port)
    } catch (error) {
      lastError = error
      if (!(error instanceof MotoExitedEarly && /address already in use/i.test(error.log))) throw error
    }
  }

  throw lastError
}

/**
 * Wipes every backend in the server. Only safe when nothing else is using it: test files run in
 * parallel workers against the one server from global setup, so tests should seed uniquely named
 * resources instead of resetting.
 */
export async function resetMoto(endpoint: string): Promise<void> {
  const response = await fetch(`${endpoint}/moto-api/reset`, {method: 'POST'})
  if (!response.ok) throw new Error(`moto reset failed: HTTP ${response.status} ${await response.text()}`)
}

/**
 * Environment for a spawned `bin/run.js` so the SDK talks only to moto. Blank and explicit values
 * override anything inherited from the developer's shell (profiles, real keys, per-service endpoints).
 */
export function awsTestEnv(endpoint: string): Record<string, string> {
  return {
    AWS_ENDPOINT_URL: endpoint,
    // Per-service variables win over AWS_ENDPOINT_URL, so an inherited one would escape to real AWS.
    AWS_ENDPOINT_URL_ROUTE_53: endpoint,
    AWS_ENDPOINT_URL_ELASTIC_LOAD_BALANCING_V2: endpoint,
    AWS_ENDPOINT_URL_CLOUDWATCH: endpoint,
    AWS_ENDPOINT_URL_EC2: endpoint,
    AWS_ENDPOINT_URL_STS: endpoint,
    AWS_ENDPOINT_URL_DYNAMODB: endpoint,
    AWS_ENDPOINT_URL_S3: endpoint,
    AWS_IGNORE_CONFIGURED_ENDPOINT_URLS: 'false',
    AWS_ACCESS_KEY_ID: 'testing',
    AWS_SECRET_ACCESS_KEY: 'testing',
    // The SDK only sends a session token when it is non-empty; blanking stops a real one riding along.
    AWS_SESSION_TOKEN: '',
    // A non-empty AWS_PROFILE makes the default chain skip the env credentials above.
    AWS_PROFILE: '',
    AWS_REGION: REGION,
    AWS_DEFAULT_REGION: REGION,
    AWS_CONFIG_FILE: '/dev/null',
    AWS_SHARED_CREDENTIALS_FILE: '/dev/null',
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_CONTAINER_CREDENTIALS_RELATIVE_URI: '',
    AWS_CONTAINER_CREDENTIALS_FULL_URI: '',
    AWS_WEB_IDENTITY_TOKEN_FILE: '',
    AWS_ROLE_ARN: '',
    // On Node 20 the SDK warns on stderr about its future Node 22 requirement, which would pollute CLI stderr assertions.
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  }
}

export function clientConfig(endpoint: string): AwsClientConfig {
  return {endpoint, region: REGION, credentials: {accessKeyId: 'testing', secretAccessKey: 'testing'}}
}

class MotoExitedEarly extends Error {
  constructor(
    message: string,
    readonly log: string,
  ) {
    super(message)
  }
}

async function launch(bin: string, port: number): Promise<Moto> {
  const endpoint = `http://${HOST}:${port}`
  const child = spawn(bin, ['-H', HOST, '-p', String(port)], {stdio: ['ignore', 'pipe', 'pipe']})
  let log = ''
  const append = (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-LOG_LIMIT)
  }
  child.stdout.on('data', append)
  child.stderr.on('data', append)

  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  let spawnError: Error | undefined
  child.once('error', (error) => (spawnError = error))

  // If vitest dies without running teardown, don't leave a server behind holding the port.
  const killOnExit = () => child.kill('SIGKILL')
  process.once('exit', killOnExit)

  const stop = async () => {
    process.removeListener('exit', killOnExit)
    await terminate(child, exited)
  }

  const deadline = Date.now() + READY_TIMEOUT_MS
  for (;;) {
    if (spawnError) {
      await stop()
      throw new Error(`could not run ${bin}: ${spawnError.message}\n${INSTALL_HINT}`)
    }
    if (child.exitCode !== null || child.signalCode !== null) {
      await stop()
      throw new MotoExitedEarly(`moto_server exited (${child.exitCode ?? child.signalCode}) before answering on ${endpoint}\n${tail(log)}`, log)
    }
    if (await answers(endpoint)) return {endpoint, stop}
    if (Date.now() > deadline) {
      await stop()
      throw new Error(`moto_server did not answer on ${endpoint} within ${READY_TIMEOUT_MS / 1000} s\n${tail(log)}`)
    }
    await sleep(100)
  }
}

async function answers(endpoint: string): Promise<boolean> {
  try {
    const response = await fetch(`${endpoint}/moto-api/`, {signal: AbortSignal.timeout(1_000)})
    await response.arrayBuffer()
    return response.ok
  } catch {
    return false
  }
}

async function terminate(child: ChildProcess, exited: Promise<void>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return
  child.kill('SIGTERM')
  const timer = setTimeout(() => child.kill('SIGKILL'), KILL_GRACE_MS)
  await exited
  clearTimeout(timer)
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.unref()
    server.once('error', reject)
    server.listen(0, HOST, () => {
      const address = server.address()
      if (address === null || typeof address === 'string') {
        server.close()
        reject(new Error('could not read a free port'))
        return
      }
      server.close(() => resolve(address.port))
    })
  })
}

// Checked up front so a missing install fails with the install hint, not a bare ENOENT.
function findOnPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue
    const candidate = join(dir, name)
    try {
      accessSync(candidate, constants.X_OK)
      return candidate
    } catch {
      // not in this directory
    }
  }
  return undefined
}

function tail(log: string, lines = 30): string {
  const text = log.trimEnd().split('\n').slice(-lines).join('\n')
  return text ? `--- moto_server log (tail) ---\n${text}` : '(moto_server printed nothing)'
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}
