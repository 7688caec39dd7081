import {createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse} from 'node:http'
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
  /** When it arrived (Date.now()). */
  at: number
  /** The SDK's user agents (they name its retry mode, cfg/retry-mode#…). */
  userAgent: string
}

/** A deregistered target, listed as draining for the deregistration delay as ELBv2 does (moto forgets it at once). */
export interface Drain {
  targetGroupArn: string
  /** `id:port`, as sluice's journal names a target. */
  target: string
  /** Date.now() when the deregistration arrived, and when its drain ends (earlier if it is registered again). */
  from: number
  until: number
}

const elbv2Ns = 'http://elasticloadbalancing.amazonaws.com/doc/2015-12-01/'

/** The targets of a RegisterTargets / DeregisterTargets query body, as `id:port`. */
export function targetsOf(params: URLSearchParams): string[] {
  const out: string[] = []
  for (let n = 1; params.has(`Targets.member.${n}.Id`); n++) out.push(`${params.get(`Targets.member.${n}.Id`)}:${params.get(`Targets.member.${n}.Port`) ?? ''}`)
  return out
}

function withTargets(params: URLSearchParams, targets: string[]): string {
  const next = new URLSearchParams([...params].filter(([key]) => !key.startsWith('Targets.member.')))
  targets.forEach((t, k) => {
    const at = t.lastIndexOf(':')
    next.set(`Targets.member.${k + 1}.Id`, t.slice(0, at))
    if (t.slice(at + 1)) next.set(`Targets.member.${k + 1}.Port`, t.slice(at + 1))
  })
  return next.toString()
}

function drainingMember(target: string): string {
  const at = target.lastIndexOf(':')
  const port = target.slice(at + 1)
  return `<member><Target><Id>${target.slice(0, at)}</Id>${port ? `<Port>${port}</Port>` : ''}</Target>${port ? `<HealthCheckPort>${port}</HealthCheckPort>` : ''}<TargetHealth><State>draining</State><Reason>Target.DeregistrationInProgress</Reason><Description>Target deregistration is in progress</Description></TargetHealth></member>`
}

export interface Injection {
  /** Which calls to fail: an operation, or '*' for every call of `service`. */
  operation: string
  service?: string
  /** How many times, from the first matching call. */
  times: number
  /** Fail only this share of the matching calls, picked by a seeded generator (to throttle some of them). */
  share?: number
  status: number
  /** The response body (XML or JSON, as the service speaks). */
  body: string
  contentType: string
}

/** moto's answer to a forwarded call, or the answer an interceptor gives instead. */
export interface Answer {
  status: number
  /** Uncompressed. */
  body: string
}

/** A reply the proxy gives itself, never reaching moto. */
export interface Reply extends Answer {
  contentType: string
}

/**
 * What an interceptor does with a call: answer it itself (`reply`), or let it go on to moto with
 * another request body (`body`; the recorded call keeps what the client sent) and/or with moto's
 * answer rewritten (`rewrite`: given moto's status and body after the proxy's own emulation, it
 * returns what the client gets; the headers stay moto's).
 */
export type Interception = {reply: Reply} | {body?: string; rewrite?: (answer: Answer) => Answer | Promise<Answer>}

/** Consulted for each call after holds and injections; undefined lets the next interceptor, then the proxy, have it. */
export type Interceptor = (call: RecordedCall) => Interception | undefined | Promise<Interception | undefined>

function service(req: IncomingMessage): string {
  const auth = String(req.headers.authorization ?? '')
  const scope = /Credential=[^/]+\/\d+\/[^/]+\/([^/]+)\//.exec(auth)
  const names: Record<string, string> = {route53: 'Route53', elasticloadbalancing: 'ELBv2', monitoring: 'CloudWatch', ec2: 'EC2', sts: 'STS'}
  return scope ? (names[scope[1]] ?? scope[1]) : 'unknown'
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
  /** Seconds a deregistered target stays draining; null: as moto does, gone at once. */
  private drainSeconds: number | null = null
  /** Every deregistration's drain, while draining is emulated. */
  readonly drains: Drain[] = []
  /** Called as each call arrives, before it is answered or forwarded (to kill a client mid-call). */
  onCall?: (call: RecordedCall) => void
  /** Targets failing their health checks, by target group: moto reports every registered target healthy. */
  private readonly failing = new Map<string, Set<string>>()

  /** From now on, these targets (by Id) of the group are listed unhealthy, failing their checks, as ELBv2 lists them. */
  failChecks(targetGroupArn: string, ids: string[]): void {
    this.failing.set(targetGroupArn, new Set(ids))
  }

  constructor(private readonly target: string) {}

  private readonly interceptors: Interceptor[] = []

  /**
   * From now on, `interceptor` sees each call that gets past holds, refusals and injections, in the
   * order added; the first to return an interception has it. Returns a function that removes it.
   */
  intercept(interceptor: Interceptor): () => void {
    this.interceptors.push(interceptor)
    return () => {
      const at = this.interceptors.indexOf(interceptor)
      if (at >= 0) this.interceptors.splice(at, 1)
    }
  }

  private async interception(call: RecordedCall): Promise<Interception | undefined> {
    for (const interceptor of [...this.interceptors]) {
      const found = await interceptor(call)
      if (found) return found
    }
    return undefined
  }

  /**
   * A deregistration made behind the proxy's back (an ECS scheduler emulated beside it, calling
   * moto directly) drains as one made through it would, while draining is emulated.
   */
  noteDeregistered(targetGroupArn: string, targets: string[], at = Date.now()): void {
    if (this.drainSeconds === null) return
    const active = new Set(this.draining(targetGroupArn, at).map((d) => d.target))
    for (const target of targets.filter((t) => !active.has(t))) this.drains.push({targetGroupArn, target, from: at, until: at + this.drainSeconds * 1000})
  }

  async start(): Promise<string> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = []
      req.on('data', (c: Buffer) => chunks.push(c))
      req.on('end', () => {
        const raw = Buffer.concat(chunks)
        const body = raw.toString('utf8')
        const call: RecordedCall = {
          service: service(req),
          operation: operation(req, body),
          method: req.method ?? 'GET',
          path: req.url ?? '/',
          body,
          status: 0,
          at: Date.now(),
          userAgent: `${req.headers['user-agent'] ?? ''} ${String(req.headers['x-amz-user-agent'] ?? '')}`,
        }
        this.calls.push(call)
        this.onCall?.(call)
        if (this.holds.has(call.operation)) {
          this.held.push(call)
          return
        }
        // Real AWS refuses an authenticate-oidc action re-sent without its secret (see oidcSecretRefusal).
        const refusal = call.service === 'ELBv2' && (call.operation === 'ModifyRule' || call.operation === 'ModifyListener') ? oidcSecretRefusal(body) : null
        if (refusal) {
          call.status = 400
          res.writeHead(400, {'content-type': 'text/xml'})
          res.end(refusal)
          return
        }
        const injection = this.injections.find((i) => i.times > 0 && (i.operation === call.operation || (i.operation === '*' && i.service === call.service)))
        if (injection && (injection.share === undefined || this.draw() < injection.share)) {
          injection.times--
          call.status = injection.status
          res.writeHead(injection.status, {'content-type': injection.contentType})
          res.end(injection.body)
          return
        }
        if (this.interceptors.length === 0) {
          this.forward(call, req, res, raw)
          return
        }
        this.interception(call).then(
          (found) => {
            if (found && 'reply' in found) {
              call.status = found.reply.status
              res.writeHead(found.reply.status, {'content-type': found.reply.contentType, 'content-length': String(Buffer.byteLength(found.reply.body))})
              res.end(found.reply.body)
              return
            }
            this.forward(call, req, res, found?.body === undefined ? raw : Buffer.from(found.body), found?.rewrite)
          },
          (error: unknown) => {
            call.status = 500
            res.writeHead(500, {'content-type': 'text/plain'})
            res.end(`the proxy's interceptor failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
          },
        )
      })
    })
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve))
    this.endpoint = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`
    return this.endpoint
  }

  /** Sends a call on to moto (`raw` is the body to send), emulating what moto lacks on the way, and answers the client. */
  private forward(call: RecordedCall, req: IncomingMessage, res: ServerResponse, raw: Buffer, hook?: (answer: Answer) => Answer | Promise<Answer>): void {
    const upstream = new URL(this.target)
    // ELBv2 as AWS runs it: a deregistered target drains for the deregistration delay, listed
    // as draining; deregistering it again meanwhile is accepted; registering it ends the drain.
    const params = new URLSearchParams(raw.toString('utf8'))
    const arn = params.get('TargetGroupArn') ?? ''
    let drainsFrom: string[] = []
    if (this.drainSeconds !== null && call.operation === 'DeregisterTargets') {
      const active = new Set(this.draining(arn, call.at).map((d) => d.target))
      drainsFrom = targetsOf(params).filter((t) => !active.has(t))
      if (drainsFrom.length === 0) {
        call.status = 200
        res.writeHead(200, {'content-type': 'text/xml'})
        res.end(
          `<DeregisterTargetsResponse xmlns="${elbv2Ns}"><DeregisterTargetsResult/><ResponseMetadata><RequestId>drain</RequestId></ResponseMetadata></DeregisterTargetsResponse>`,
        )
        return
      }
      raw = Buffer.from(withTargets(params, drainsFrom))
    }
    if (this.drainSeconds !== null && call.operation === 'RegisterTargets') {
      const registering = new Set(targetsOf(params))
      for (const d of this.draining(arn, call.at)) if (registering.has(d.target)) d.until = call.at
    }
    const rewrite = (this.drainSeconds !== null || this.failing.has(arn)) && call.operation === 'DescribeTargetHealth'
    const hideSecrets = call.service === 'ELBv2' && (call.operation === 'DescribeRules' || call.operation === 'DescribeListeners')
    const headers = {...req.headers, 'content-length': String(raw.length)}
    if (rewrite || hideSecrets || hook) delete headers['accept-encoding']
    const forward = httpRequest({hostname: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers}, (answer) => {
      call.status = answer.statusCode ?? 0
      if (drainsFrom.length > 0 && call.status === 200)
        for (const target of drainsFrom) this.drains.push({targetGroupArn: arn, target, from: call.at, until: call.at + this.drainSeconds! * 1000})
      if (hook) {
        const parts: Buffer[] = []
        answer.on('data', (c: Buffer) => parts.push(c))
        answer.on('end', () => {
          let out = Buffer.concat(parts).toString('utf8')
          if (hideSecrets && call.status === 200) out = withoutClientSecrets(out)
          if (rewrite && call.status === 200) out = this.healthAsElbv2(arn, out)
          Promise.resolve()
            .then(() => hook({status: call.status, body: out}))
            .then(
              (final) => {
                call.status = final.status
                const {'transfer-encoding': _chunked, ...kept} = answer.headers
                res.writeHead(final.status, {...kept, 'content-length': String(Buffer.byteLength(final.body))})
                res.end(final.body)
              },
              (error: unknown) => {
                call.status = 500
                res.writeHead(500, {'content-type': 'text/plain'})
                res.end(`the proxy's rewrite failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`)
              },
            )
        })
        return
      }
      if (hideSecrets && call.status === 200) {
        const parts: Buffer[] = []
        answer.on('data', (c: Buffer) => parts.push(c))
        answer.on('end', () => {
          const out = withoutClientSecrets(Buffer.concat(parts).toString('utf8'))
          res.writeHead(200, {...answer.headers, 'content-length': String(Buffer.byteLength(out))})
          res.end(out)
        })
        return
      }
      if (!rewrite || call.status !== 200) {
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
        return
      }
      const parts: Buffer[] = []
      answer.on('data', (c: Buffer) => parts.push(c))
      answer.on('end', () => {
        const out = this.healthAsElbv2(arn, Buffer.concat(parts).toString('utf8'))
        res.writeHead(200, {...answer.headers, 'content-length': String(Buffer.byteLength(out))})
        res.end(out)
      })
    })
    forward.on('error', (error) => {
      res.writeHead(502)
      res.end(String(error))
    })
    forward.end(raw)
  }

  /** A DescribeTargetHealth answer with the drains under way listed as draining, and the failing targets as unhealthy. */
  private healthAsElbv2(arn: string, answer: string): string {
    const members = this.draining(arn, Date.now())
      .map((d) => drainingMember(d.target))
      .join('')
    const failing = this.failing.get(arn) ?? new Set<string>()
    const xml = answer.replace(/<member>([\s\S]*?)<\/member>/g, (member: string) => {
      const id = /<Id>([^<]+)<\/Id>/.exec(member)?.[1]
      return id && failing.has(id)
        ? member.replace(
            /<TargetHealth>[\s\S]*?<\/TargetHealth>/,
            '<TargetHealth><State>unhealthy</State><Reason>Target.Timeout</Reason><Description>Request timed out</Description></TargetHealth>',
          )
        : member
    })
    return /<TargetHealthDescriptions\s*\/>/.test(xml)
      ? xml.replace(/<TargetHealthDescriptions\s*\/>/, `<TargetHealthDescriptions>${members}</TargetHealthDescriptions>`)
      : xml.replace('</TargetHealthDescriptions>', `${members}</TargetHealthDescriptions>`)
  }

  /**
   * From now on, a deregistered target stays listed as draining for `seconds` (a group's
   * deregistration delay; AWS's default is 300 s), as ELBv2 does.
   */
  emulateDraining(seconds: number): void {
    this.drainSeconds = seconds
  }

  /** The drains of a target group still under way at `now`. */
  draining(targetGroupArn: string, now = Date.now()): Drain[] {
    return this.drains.filter((d) => d.targetGroupArn === targetGroupArn && d.from <= now && now < d.until)
  }

  private seed = 20261201
  /** A small seeded generator (mulberry32): the same calls fail in every run. */
  private draw(): number {
    let t = (this.seed = (this.seed + 0x6d2b79f5) | 0)
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
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

/**
 * A DescribeRules or DescribeListeners answer as AWS gives it: an authenticate-oidc action's
 * ClientSecret is never returned (moto returns it as given). What AWS does return of the action
 * (issuer, endpoints, client id, scope, session settings) is left as moto gives it.
 */
export function withoutClientSecrets(xml: string): string {
  return xml.replace(/<ClientSecret>[^<]*<\/ClientSecret>/g, '')
}

/**
 * The refusal AWS gives a ModifyRule or ModifyListener whose authenticate-oidc action has neither
 * ClientSecret nor UseExistingClientSecret=true, or both; null when it has one of them. The API
 * reference (AuthenticateOidcActionConfig): ClientSecret "is required if you are creating a rule.
 * If you are modifying a rule, you can omit this parameter if you set UseExistingClientSecret to
 * true". Both at once AWS refuses with InvalidLoadBalancerAction, "You cannot both specify a
 * client secret and set UseExistingClientSecret to true" (seen from ModifyRule in
 * ansible-collections/amazon.aws#1877). The wording for neither is not published; the code is
 * the one AWS uses for a bad action, and moto, which accepts both cases, is what this stands in for.
 */
export function oidcSecretRefusal(body: string): string | null {
  const params = new URLSearchParams(body)
  for (const [key, value] of params) {
    const m = /^((?:Default)?Actions\.member\.\d+)\.Type$/.exec(key)
    if (!m || value !== 'authenticate-oidc') continue
    const secret = params.get(`${m[1]}.AuthenticateOidcConfig.ClientSecret`)
    const useExisting = params.get(`${m[1]}.AuthenticateOidcConfig.UseExistingClientSecret`) === 'true'
    const message =
      secret !== null && useExisting
        ? 'You cannot both specify a client secret and set UseExistingClientSecret to true'
        : secret === null && !useExisting
          ? 'A client secret must be specified for an authenticate-oidc action, or UseExistingClientSecret set to true when modifying it'
          : null
    if (message)
      return `<ErrorResponse xmlns="${elbv2Ns}"><Error><Type>Sender</Type><Code>InvalidLoadBalancerAction</Code><Message>${message}</Message></Error><RequestId>00000000-0000-0000-0000-000000000000</RequestId></ErrorResponse>`
  }
  return null
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
