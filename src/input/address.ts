import {FailedError} from '../errors.js'

// Read by the runbook loader (targets.haproxy.socket) and by the Runtime API client alike, so
// both judge an address the same way.

/** Where the Runtime API listens: `unix:/run/haproxy/admin.sock`, `/run/haproxy/admin.sock`, or `127.0.0.1:9999`. */
export type RuntimeAddress = {kind: 'unix'; path: string} | {kind: 'tcp'; host: string; port: number}

export function parseAddress(address: string): RuntimeAddress {
  if (address.startsWith('unix:')) return {kind: 'unix', path: address.slice('unix:'.length)}
  if (address.startsWith('/') || address.startsWith('.')) return {kind: 'unix', path: address}
  const m = /^(?:tcp:|ipv4@)?(\[[^\]]+\]|[^:]+):(\d+)$/.exec(address)
  if (!m) throw new FailedError(`haproxy runtime API address "${address}" is neither a unix socket path (unix:/run/haproxy/admin.sock) nor host:port`)
  const port = Number(m[2])
  if (!(port >= 1 && port <= 65535)) throw new FailedError(`haproxy runtime API address "${address}": port ${m[2]} is not a TCP port; expected 1 to 65535`)
  return {kind: 'tcp', host: m[1].replace(/^\[|\]$/g, ''), port}
}
