import {readFileSync, readlinkSync} from 'node:fs'

/**
 * Where a process runs, precisely enough that a pid means the same process to two observers:
 * the same kernel boot and the same pid namespace (two containers on one host share a hostname
 * as often as not, and never their pids). Undefined where the kernel does not say (no /proc),
 * and then a holder is judged by its lease alone.
 */
export function processPlace(): string | undefined {
  try {
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()
    const pids = readlinkSync('/proc/self/ns/pid')
    return boot && pids ? `${boot}/${pids}` : undefined
  } catch {
    return undefined
  }
}

/** Fields 3 onwards of /proc/PID/stat, or undefined where there is no such file. */
function stat(pid: number): string[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // The command name (field 2) may hold spaces and parentheses: count from its last ')'.
    return text.slice(text.lastIndexOf(')') + 2).split(' ')
  } catch {
    return undefined
  }
}

/** When a process started, in clock ticks since boot (field 22 of /proc/PID/stat): a pid reused by a later process starts later. */
export function processStart(pid: number): string | undefined {
  return stat(pid)?.[19]
}

/**
 * Whether the process is stopped (SIGSTOP, Ctrl-Z, a debugger): it exists, but renews nothing
 * until it is continued, which may be never. Its locks are judged by their lease, as a holder's
 * on another host are.
 */
export function processStopped(pid: number): boolean {
  const state = stat(pid)?.[0]
  return state === 'T' || state === 't'
}

/** Whether the process `pid`, started at `started` if that is known, still runs in this place. */
export function processRuns(pid: number, started?: string): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false
  try {
    process.kill(pid, 0)
  } catch (error) {
    // EPERM: it runs, as another user.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false
  }
  const fields = stat(pid)
  // A zombie has exited; only its parent has not yet read its status.
  if (fields?.[0] === 'Z') return false
  return started === undefined || fields === undefined || fields[19] === started
}

export const thisPlace = processPlace()
export const thisStart = processStart(process.pid)
