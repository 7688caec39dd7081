import {spawn, spawnSync, type ChildProcess} from 'node:child_process'
import {existsSync, rmSync} from 'node:fs'
import {createConnection} from 'node:net'
import {delimiter, join} from 'node:path'
import {scratchDir, writeScratchFile} from '../platform/scratch-dir.js'

/** How to get HAProxy, said wherever it is missing. */
export const installHaproxy = 'apt-get install -y haproxy (Debian, Ubuntu) or brew install haproxy'

/**
 * The system HAProxy: on the PATH, or (unless `onPathOnly`) in /usr/sbin where Debian puts it,
 * which is not on every user's PATH; null when there is none.
 */
export function findHaproxy(path = process.env.PATH ?? '', options: {onPathOnly?: boolean} = {}): string | null {
  return findIn([...path.split(delimiter), ...(options.onPathOnly ? [] : ['/usr/sbin', '/usr/local/sbin', '/opt/homebrew/bin'])], 'haproxy')
}

function findIn(dirs: string[], name: string): string | null {
  return (
    dirs
      .filter(Boolean)
      .map((d) => join(d, name))
      .find((p) => existsSync(p)) ?? null
  )
}

let setprivFound: string | null | undefined

/** util-linux's setpriv (Linux only) if it has --pdeathsig (util-linux 2.33 on); null otherwise. */
function findSetpriv(): string | null {
  if (setprivFound === undefined) {
    const found = process.platform === 'linux' ? findIn([...(process.env.PATH ?? '').split(delimiter), '/usr/bin', '/bin'], 'setpriv') : null
    setprivFound = found && spawnSync(found, ['--help'], {encoding: 'utf8'}).stdout?.includes('--pdeathsig') ? found : null
  }
  return setprivFound
}

export interface RunningHaproxy {
  dir: string
  /** The admin socket (`stats socket <dir>/admin.sock … level admin`, which the config must give). */
  socket: string
  child: ChildProcess
  /** Kills HAProxy and removes its directory; safe to call twice. */
  stop(): Promise<void>
}

/**
 * Starts HAProxy in the foreground (-db) on `config(dir)`, in a directory of its own with `files`
 * beside the config, and waits for its admin socket `<dir>/admin.sock`. If it fails to start (or
 * `signal` aborts before it is up), it is killed and the directory removed before the error
 * (HAProxy's own first lines) is thrown. Should this process end without calling stop(), HAProxy
 * is killed on its way out; on Linux with setpriv (util-linux), the kernel kills it too when this
 * process is killed outright (kill -9), which runs no exit handler. Elsewhere a process killed that
 * way leaves HAProxy running.
 */
export async function startHaproxy(
  binary: string,
  config: (dir: string) => string,
  files: Record<string, string> = {},
  options: {signal?: AbortSignal} = {},
): Promise<RunningHaproxy> {
  const dir = scratchDir('haproxy')
  for (const [name, text] of Object.entries(files)) writeScratchFile(join(dir, name), text)
  const cfg = join(dir, 'haproxy.cfg')
  writeScratchFile(cfg, config(dir))
  const socket = join(dir, 'admin.sock')
  const haproxy = [binary, '-f', cfg, '-db']
  // kill -9 runs no exit handler, so only the kernel can stop HAProxy then. setpriv execs HAProxy
  // in its own process, so child.pid is HAProxy's pid and HAProxy's stderr comes through.
  // PR_SET_PDEATHSIG fires when the parent thread exits; Node spawns children from its main thread.
  const setpriv = findSetpriv()
  const command = setpriv ? [setpriv, '--pdeathsig', 'KILL', '--', ...haproxy] : haproxy
  const child = spawn(command[0], command.slice(1), {stdio: ['ignore', 'ignore', 'pipe']})
  let spawnError: Error | undefined
  child.once('error', (error) => (spawnError = error))
  let stderr = ''
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const onExit = () => child.kill('SIGKILL')
  process.once('exit', onExit)
  let stopping: Promise<void> | null = null
  const stop = () =>
    (stopping ??= (async () => {
      process.off('exit', onExit)
      if (child.exitCode === null && child.signalCode === null && !spawnError) {
        child.kill('SIGKILL')
        await exited
      }
      rmSync(dir, {recursive: true, force: true})
    })())
  const deadline = Date.now() + 10_000
  // HAProxy creates the socket's file when it binds and accepts on it only once it listens: a
  // connection in between is refused, so wait for one that is taken.
  while (!existsSync(socket) || !(await accepts(socket))) {
    // Stopped by the caller's signal (a drill's Ctrl-C): killed at once rather than waited for.
    if (options.signal?.aborted) {
      await stop()
      throw new Error('haproxy was stopped while it started: interrupted')
    }
    // Killed by a signal (a Ctrl-C that reached its process group), it has no exit code: that is gone too.
    if (spawnError || child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
      await stop()
      const said =
        stderr
          .trim()
          .split('\n')
          .filter((l) => /ALERT|error/i.test(l))
          .slice(0, 3)
          .join('; ') || stderr.trim().split('\n')[0]
      throw new Error(`haproxy did not start: ${spawnError?.message ?? (said || 'no admin socket within 10 s')}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  return {dir, socket, child, stop}
}

/** Whether a Unix socket takes a connection now. */
function accepts(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createConnection(path)
    probe.once('connect', () => {
      probe.destroy()
      resolve(true)
    })
    probe.once('error', () => resolve(false))
  })
}
