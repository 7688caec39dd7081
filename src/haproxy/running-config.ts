import {readFileSync, readlinkSync} from 'node:fs'
import {basename, resolve} from 'node:path'
import {InputError} from '../errors.js'
import type {RuntimeApi} from './runtime.js'

/** Said whenever the configuration cannot be found: what is missing and how to give it. */
export const configNeeded =
  "HAProxy's Runtime API does not show inter, fastinter, slowstart or the check and server timeouts; pass its configuration file with --haproxy-config FILE"

/**
 * The configuration files (or directories) the HAProxy behind `api` was started with: its pid from
 * `show info`, then its command line in /proc (the `-f` arguments and any after `--`, relative ones
 * from its working directory or `-C`). Only for a HAProxy on this machine, over a Unix socket, on
 * Linux: a TCP socket may be another machine's HAProxy, whose pid means nothing here (or names
 * another process), and a pid from another pid namespace is checked by the process being HAProxy.
 */
export async function runningConfigPaths(api: RuntimeApi, signal?: AbortSignal, proc = '/proc'): Promise<string[]> {
  const cannot = (why: string) => new InputError(`cannot find the configuration of the HAProxy at ${api.label}: ${why}. ${configNeeded}`)
  if (api.address.kind !== 'unix') throw cannot('its Runtime API is a TCP socket, which may be another machine')
  if (process.platform !== 'linux' && proc === '/proc') throw cannot('finding it from its process works on Linux only')
  const pid = /^Pid:\s*(\d+)\s*$/m.exec(await api.send('show info', signal))?.[1]
  if (!pid) throw cannot('`show info` gives no Pid')
  let args: string[]
  let cwd: string
  try {
    args = readFileSync(`${proc}/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean)
    cwd = readlinkSync(`${proc}/${pid}/cwd`)
  } catch (error) {
    throw cannot(`its process ${pid} cannot be read here (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}; another container or user?)`)
  }
  if (!basename(args[0] ?? '').includes('haproxy')) throw cannot(`process ${pid} here is ${args[0] ?? 'unnamed'}, not HAProxy (another pid namespace?)`)
  const paths = configArguments(args.slice(1))
  if (paths.files.length === 0) throw cannot(`its command line (${args.join(' ')}) names no -f file`)
  return paths.files.map((f) => resolve(cwd, paths.chdir ?? '.', f))
}

/** The `-f` files in a HAProxy command line, and those after `--`; `-C DIR` is where relative ones are. */
export function configArguments(args: string[]): {files: string[]; chdir?: string} {
  const files: string[] = []
  let chdir: string | undefined
  for (let i = 0; i < args.length; i++) {
    if (args[i] === '--') {
      files.push(...args.slice(i + 1))
      break
    }
    if (args[i] === '-f' && args[i + 1] !== undefined) files.push(args[++i])
    else if (args[i] === '-C' && args[i + 1] !== undefined) chdir = args[++i]
  }
  return chdir === undefined ? {files} : {files, chdir}
}
