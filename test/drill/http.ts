import http from 'node:http'
import {connect} from 'node:net'

export interface Answer {
  /** HTTP status, or what went wrong instead. */
  status: number | 'timeout' | 'refused' | 'reset'
  ms: number
  headers: http.IncomingHttpHeaders
}

/** One GET on a fresh connection, given up after timeoutMs. */
export function get(port: number, path: string, timeoutMs: number, headers: Record<string, string> = {}): Promise<Answer> {
  const started = performance.now()
  return new Promise((resolve) => {
    let done = false
    const settle = (status: Answer['status'], h: http.IncomingHttpHeaders = {}) => {
      if (done) return
      done = true
      clearTimeout(timer)
      resolve({status, ms: performance.now() - started, headers: h})
    }
    const req = http.get({host: '127.0.0.1', port, path, headers, agent: false}, (res) => {
      res.resume()
      res.on('end', () => settle(res.statusCode ?? 0, res.headers))
    })
    const timer = setTimeout(() => {
      settle('timeout')
      req.destroy()
    }, timeoutMs)
    req.on('error', (err: NodeJS.ErrnoException) => settle(err.code === 'ECONNREFUSED' ? 'refused' : 'reset'))
  })
}

/** Whether anything accepts a TCP connection on the port. */
export function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(true)
    })
    socket.once('error', () => resolve(false))
  })
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]
}
