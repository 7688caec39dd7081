import {createServer, request as httpRequest, type IncomingMessage, type Server} from 'node:http'
import type {AddressInfo} from 'node:net'

/** One AWS call as it crossed the wire. */
export interface RecordedCall {
  /** Route53, ELBv2, CloudWatch, EC2 ... from the SigV4 credential scope. */
  service: string
  /** The API operation: from `Action=` (query protocols), X-Amz-Target, the smithy-rpcv2 path, or Route 53's REST path. */
  operation: string
  method: string
  path: string
  body: string
  status: number
}

export interface Injection {
  /** Which calls to fail. */
  operation: string
  /** How many times, from the first matching call. */
  times: number
  status: number
  /** The response body (XML or JSON, as the service speaks). */
  body: string
  contentType: string
}

function service(req: IncomingMessage): string {
  const auth = String(req.headers.authorization ?? '')
  const scope = /Credential=[^/]+\/\d+\/[^/]+\/([^/]+)\//.exec(auth)
  const names: Record<string, string> = {route53: 'Route53', elasticloadbalancing: 'ELBv2', monitoring: 'CloudWatch', ec2: 'EC2'}
  return scope ? names[scope[1]] ?? scope[1] : 'unknown'
}

function operation(req: IncomingMessage, body: string): string {
  const action = /(?:^|&)Action=([A-Za-z]+)/.exec(body)
  if (action) return action[1]
  const target = String(req.headers['x-amz-target'] ?? '')
  if (target) return target.split('.').at(-1)!
  const rpc = /\/operation\/([A-Za-z]+)$/.exec(req.url ?? '')
  if (rpc) return rpc[1]
  const url = req.url ?? ''
  // Route 53 speaks REST: the operation is the method and path.
  if (/\/hostedzone\/[^/]+\/rrset\/?$/.test(url.split('?')[0])) return req.method === 'POST' ? 'ChangeResourceRecordSets' : 'ListResourceRecordSets'
  if (/\/change\//.test(url)) return 'GetChange'
  if (/\/hostedzone\/?$/.test(url.split('?')[0])) return req.method === 'POST' ? 'CreateHostedZone' : 'ListHostedZones'
  return `${req.method} ${url.split('?')[0]}`
}

/**
 * A loopback proxy in front of moto that records every AWS call (to count API use and read back
 * the order of changes) and can fail chosen calls (to test throttling and errors).
 */
export class RecordingProxy {
  readonly calls: RecordedCall[] = []
  private readonly injections: Injection[] = []
  /** Operations to hold: read, recorded, and never answered (an endpoint that has gone quiet). */
  private readonly holds = new Set<string>()
  /** Calls held so far. */
  readonly held: RecordedCall[] = []
  private server?: Server
  endpoint = ''

  constructor(private readonly target: string) {}

  async start(): Promise<string> {
    const upstream = new URL(this.target)
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        const raw = Buffer.concat(chunks)
        const body = raw.toString('utf8')
        const call: RecordedCall = {service: service(req), operation: operation(req, body), method: req.method ?? 'GET', path: req.url ?? '/', body, status: 0}
        this.calls.push(call)
        if (this.holds.has(call.operation)) {
          this.held.push(call)
          return
        }
        const injection = this.injections.find((i) => i.operation === call.operation && i.times > 0)
        if (injection) {
          injection.times--
          call.status = injection.status
          res.writeHead(injection.status, {'content-type': injection.contentType})
          res.end(injection.body)
          return
        }
        const forward = httpRequest(
          {hostname: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers},
          (answer) => {
            call.status = answer.statusCode ?? 0
            res.writeHead(answer.statusCode ?? 502, answer.headers)
            answer.pipe(res)
          },
        )
        forward.on('error', (error) => {
          res.writeHead(502)
          res.end(String(error))
        })
        forward.end(raw)
      })
    })
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve))
    this.endpoint = `http://127.0.0.1:${(this.server!.address() as AddressInfo).port}`
    return this.endpoint
  }

  inject(injection: Injection): void {
    this.injections.push(injection)
  }

  /** From now on, every call of `operation` is accepted and never answered, until release(). */
  hold(operation: string): void {
    this.holds.add(operation)
  }

  release(operation: string): void {
    this.holds.delete(operation)
  }

  count(operation: string): number {
    return this.calls.filter((c) => c.operation === operation).length
  }

  of(operation: string): RecordedCall[] {
    return this.calls.filter((c) => c.operation === operation)
  }

  async stop(): Promise<void> {
    // Held calls keep their connections open; close() would wait for them.
    this.server?.closeAllConnections()
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()))
  }
}

/** Route 53's XML throttling error, as the real service sends it. */
export const route53Throttling: Omit<Injection, 'operation' | 'times'> = {
  status: 400,
  contentType: 'text/xml',
  body: '<?xml version="1.0"?>\n<ErrorResponse xmlns="https://route53.amazonaws.com/doc/2013-04-01/"><Error><Type>Sender</Type><Code>Throttling</Code><Message>Rate exceeded</Message></Error><RequestId>00000000-0000-0000-0000-000000000000</RequestId></ErrorResponse>',
}

/** ELBv2's query-protocol throttling error. */
export const elbv2Throttling: Omit<Injection, 'operation' | 'times'> = {
  status: 400,
  contentType: 'text/xml',
  body: '<ErrorResponse xmlns="http://elasticloadbalancing.amazonaws.com/doc/2015-12-01/"><Error><Type>Sender</Type><Code>Throttling</Code><Message>Rate exceeded</Message></Error><RequestId>00000000-0000-0000-0000-000000000000</RequestId></ErrorResponse>',
}
