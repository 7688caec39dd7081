import {spawn} from 'node:child_process'
import {FailedError} from '../errors.js'
import {redactSecrets} from '../input/secrets.js'
import type {AddressBook, CommandSpec, Target, Unfilled} from '../ports/control-plane.js'

/** Output kept from a failed hook, for the error message. */
const tailBytes = 2000

/** What any command needs to run at all; nothing here is a credential. */
const baseEnvironment = ['PATH', 'HOME', 'USER', 'LOGNAME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR']

/** What a hook's command can name, and the target's value for each: none where the target has none (never ''). */
function placeholders(target: Target): Record<'{id}' | '{ip}' | '{port}', string | undefined> {
  return {
    '{id}': target.targetId || undefined,
    '{ip}': target.ip || undefined,
    '{port}': target.port === undefined ? undefined : String(target.port),
  }
}

/** The placeholders a hook's command names. */
function named(hook: CommandSpec): Array<keyof ReturnType<typeof placeholders>> {
  return (['{id}', '{ip}', '{port}'] as const).filter((p) => hook.command.some((arg) => arg.includes(p)))
}

/**
 * A hook that names a value its target does not have: it is not run. Filled in as an empty string
 * the command would run on nothing (`reapply-network-config ''`), or on whatever its own default is.
 */
export class UnfilledPlaceholderError extends FailedError {
  constructor(kind: string, hook: CommandSpec, missing: Unfilled) {
    super(`${kind} hook ${hook.command[0]} names ${missing.placeholder}, which ${missing.target.id} cannot give: ${missing.why}; the hook was not run`)
  }
}

/**
 * The hook's environment: the base, the names the runbook passes on, and the target. sluice's own
 * AWS credentials stay with sluice unless a runbook asks for them by name. A value the target does
 * not have is left unset, never set empty, so a script that checks for it (`${SLUICE_TARGET_IP:?}`)
 * stops rather than acting on nothing.
 */
function hookEnvironment(kind: string, hook: CommandSpec, target: Target): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const name of [...baseEnvironment, ...(hook.env ?? [])]) if (process.env[name] !== undefined) env[name] = process.env[name]
  const values = placeholders(target)
  const known = (name: string, value: string | undefined) => (value === undefined ? {} : {[name]: value})
  return {
    ...env,
    SLUICE_HOOK: kind,
    ...known('SLUICE_TARGET_ID', values['{id}']),
    ...known('SLUICE_TARGET_IP', values['{ip}']),
    ...known('SLUICE_TARGET_PORT', values['{port}']),
  }
}

/**
 * Runs restart and remediation hooks. The command is an argv template: `{id}` (the bare target id:
 * the instance id or the IP, never `id:port`), `{ip}` and `{port}` are replaced inside single
 * arguments, and the target is also passed as SLUICE_TARGET_ID, _IP and _PORT. Nothing goes through a shell, so a target id can never become a command.
 *
 * A hook gets what it names or does not run: where the group gives no address (an instance target
 * group lists instance ids only), `addresses` finds it when the command names `{ip}`; a target
 * that still has none, or no port for `{port}`, fails its hook with UnfilledPlaceholderError. A
 * live run asks `unfilled` first, in its preflight, and refuses before anything changes.
 */
export class CommandHooks {
  constructor(private readonly addresses?: AddressBook) {}

  async unfilled(hook: CommandSpec, targets: Target[], signal?: AbortSignal): Promise<Unfilled[]> {
    return (await this.complete(hook, targets, signal)).unfilled
  }

  /** The targets with the addresses the hook names looked up where the group gave none, and what is still missing. */
  private async complete(hook: CommandSpec, targets: Target[], signal?: AbortSignal): Promise<{filled: Target[]; unfilled: Unfilled[]}> {
    const wanted = named(hook)
    const lookUp = wanted.includes('{ip}') && this.addresses ? targets.filter((t) => !t.ip).map((t) => t.targetId) : []
    const found = lookUp.length > 0 ? await this.addresses!.lookUp(lookUp, signal) : new Map<string, {ip: string} | {none: string}>()
    const filled: Target[] = []
    const unfilled: Unfilled[] = []
    for (const target of targets) {
      const address = found.get(target.targetId)
      const complete = address && 'ip' in address ? {...target, ip: address.ip} : target
      filled.push(complete)
      const values = placeholders(complete)
      for (const placeholder of wanted) {
        if (values[placeholder] !== undefined) continue
        const why =
          placeholder === '{ip}'
            ? address && 'none' in address
              ? address.none
              : `its group gives no address for ${target.targetId}`
            : placeholder === '{port}'
              ? `${target.targetId} is registered without a port`
              : 'the target has no id'
        unfilled.push({target, placeholder, why})
      }
    }
    return {filled, unfilled}
  }

  async run(kind: 'restart' | 'remediate', hook: CommandSpec, given: Target, signal?: AbortSignal): Promise<void> {
    const {filled, unfilled} = await this.complete(hook, [given], signal)
    if (unfilled.length > 0) throw new UnfilledPlaceholderError(kind, hook, unfilled[0])
    const target = filled[0]
    const values = placeholders(target)
    const fill = (arg: string) => arg.replace(/\{(id|ip|port)\}/g, (p) => values[p as keyof typeof values]!)
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
