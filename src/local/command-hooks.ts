import {spawn} from 'node:child_process'
import type {HookPort, HookSpec, Target} from '../ports/control-plane.js'

/** Output kept from a failed hook, for the error message. */
const tailBytes = 2000

/** What any command needs to run at all; nothing here is a credential. */
const baseEnvironment = ['PATH', 'HOME', 'USER', 'LOGNAME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR']

/** Names whose values are credentials: never printed, even when a hook prints them. */
const secretName = /SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIAL|PRIVATE|(^|_)KEY($|_)|ACCESS_KEY|SESSION/i

/**
 * The hook's environment: the base, the names the runbook passes on, and the target. sluice's own
 * AWS credentials stay with sluice unless a runbook asks for them by name.
 */
function hookEnvironment(kind: string, hook: HookSpec, target: Target): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const name of [...baseEnvironment, ...(hook.env ?? [])]) if (process.env[name] !== undefined) env[name] = process.env[name]
  return {
    ...env,
    SLUICE_HOOK: kind,
    SLUICE_TARGET_ID: target.targetId,
    SLUICE_TARGET_IP: target.ip ?? '',
    SLUICE_TARGET_PORT: target.port === undefined ? '' : String(target.port),
  }
}

/**
 * A hook's output with secrets blanked out, before it reaches an error message, and so the
 * terminal, the journal and every --json: the value of every variable the runbook hands the hook
 * (whatever its name: SLACK_WEBHOOK_URL, GITHUB_PAT, DB_PASS), and of sluice's own secret-looking
 * variables. Very short values are left alone (under 4 characters for a handed variable, 6 for
 * the others): blanking `1` or `us` everywhere would garble the message and hide nothing.
 */
export function redactSecrets(text: string, env: NodeJS.ProcessEnv = process.env, handed: readonly string[] = []): string {
  const secrets = Object.entries(env)
    .filter(([name, value]) => value && (handed.includes(name) ? value.length >= 4 : value.length >= 6 && secretName.test(name)))
    // Longest first, so a value that contains another is blanked whole.
    .sort(([, a], [, b]) => b!.length - a!.length)
  let out = text
  for (const [name, value] of secrets) out = out.split(value!).join(`[${name} redacted]`)
  return out
}

/**
 * Runs restart and remediation hooks. The command is an argv template: `{id}` (the bare target id:
 * the instance id or the IP, never `id:port`), `{ip}` and `{port}` are replaced inside single
 * arguments, and the target is also passed as SLUICE_TARGET_ID, _IP and _PORT. Nothing goes through a shell, so a target id can never become a command.
 */
export class CommandHooks implements HookPort {
  async run(kind: 'restart' | 'remediate', hook: HookSpec, target: Target, signal?: AbortSignal): Promise<void> {
    const fill = (arg: string) =>
      arg
        .replaceAll('{id}', target.targetId)
        .replaceAll('{ip}', target.ip ?? '')
        .replaceAll('{port}', target.port === undefined ? '' : String(target.port))
    const [command, ...args] = hook.command.map(fill)
    await new Promise<void>((resolve, reject) => {
      // Its own process group, so a timeout stops the whole hook (a script and whatever it started),
      // not just the first process while a child holds its output open.
      const child = spawn(command, args, {
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: hookEnvironment(kind, hook, target),
      })
      let output = ''
      const keep = (chunk: Buffer) => {
        output = (output + chunk.toString()).slice(-tailBytes)
      }
      child.stdout.on('data', keep)
      child.stderr.on('data', keep)
      const stop = (signal: NodeJS.Signals) => {
        try {
          if (child.pid !== undefined) process.kill(-child.pid, signal)
        } catch {
          // Already gone.
        }
      }
      let timedOut = false
      const timer = setTimeout(() => {
        timedOut = true
        stop('SIGTERM')
        setTimeout(() => stop('SIGKILL'), 5000).unref()
      }, hook.timeoutSeconds * 1000)
      const onAbort = () => stop('SIGTERM')
      signal?.addEventListener('abort', onAbort, {once: true})
      child.on('error', (error) => {
        clearTimeout(timer)
        signal?.removeEventListener('abort', onAbort)
        reject(new Error(`${kind} hook ${command} could not start: ${error.message}`))
      })
      child.on('close', (code, sig) => {
        clearTimeout(timer)
        signal?.removeEventListener('abort', onAbort)
        const last = (redactSecrets(output, process.env, hook.env).trim().split('\n').at(-1) ?? '').slice(0, 500)
        if (timedOut) reject(new Error(`${kind} hook ${command} timed out after ${hook.timeoutSeconds} s${last ? `: ${last}` : ''}`))
        else if (code !== 0) reject(new Error(`${kind} hook ${command} exited ${code ?? sig}${last ? `: ${last}` : ''}`))
        else resolve()
      })
    })
  }
}
