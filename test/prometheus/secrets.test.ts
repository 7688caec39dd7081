import {existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterAll, afterEach, beforeAll, describe, expect, it} from 'vitest'
import {headerValueProblem, redactUrl, scrubSecrets} from '../../src/input/secrets.js'
import {isolatedEnv, type CliResult} from '../helpers/cli.js'
import {inProcess as sluice} from '../helpers/command.js'
import {FakePrometheus, mappingText} from '../helpers/fake-prometheus.js'

// Secrets that reach sluice's Prometheus source: the Authorization header's value (from the
// variable a mapping's or a runbook's authorizationEnv names), and a token in the URL's query
// string. Each is sent where it is meant to go and never shown or stored: a header value that
// cannot be sent is bad input naming the variable (before, fetch's own error quoted it:
// `Headers.append: "Bearer SECRET\nline2" is an invalid header value`, in --json too); what a
// server answers is scrubbed of it (a 401 that echoes the header); a URL is shown and written with
// its secret parameters REDACTED, as kubectl and Terraform show theirs (before, `?token=X` was
// printed and written into the calibrated scenario, and never sent).

const truth = {servers: 8, capacity: 100, low: 300, high: 1050, latencyFloor: 0.04}
const envoyChecks = '{interval: 10, baseEjection: 30, maxEjection: 300, maxEjectionPercent: 100, panicThreshold: 0, slowStart: 0}'
const variable = 'SLUICE_TEST_PROM_TOKEN'
/** The secrets seeded here: none may appear in anything sluice prints or writes. */
const token = 'SEKRET-header-7c1f9a'
const queryToken = 'SEKRET-query-42b8e0'

/** Every file under `dir`, as text. */
function filesUnder(dir: string): Array<{file: string; text: string}> {
  if (!existsSync(dir)) return []
  return readdirSync(dir, {recursive: true, encoding: 'utf8'})
    .map((f) => join(dir, f))
    .filter((f) => statSync(f).isFile())
    .map((file) => ({file, text: readFileSync(file, 'utf8')}))
}

describe('Prometheus secrets: checked before use, sent, never shown or written', () => {
  const end = Math.floor(Date.now() / 60_000) * 60 - 20 * 60
  const until = ['--until', new Date(end * 1000).toISOString()]
  const fake = new FakePrometheus({end, truth})
  /** What sluice writes goes here; what the test gives it (a runbook holding a URL's token) in `inputs`. */
  const dir = mkdtempSync(join(tmpdir(), 'sluice-secrets-'))
  const inputs = mkdtempSync(join(tmpdir(), 'sluice-secrets-in-'))
  const mapping = join(inputs, 'mailbox-prometheus.yaml')
  const env = isolatedEnv('secrets')
  let url = ''
  const outputs: CliResult[] = []
  const run = async (args: string[], extra: Record<string, string> = {}): Promise<CliResult> => {
    const out = await sluice(args, {env: {...env, ...extra}})
    outputs.push(out)
    return out
  }

  beforeAll(async () => {
    url = await fake.listen()
    writeFileSync(mapping, mappingText('envoy', envoyChecks, `authorizationEnv: ${variable}\n`))
  })
  afterEach(() => {
    fake.failWith = null
  })
  afterAll(async () => {
    await fake.close()
    // Nothing any run here printed, and nothing it wrote, holds a seeded secret.
    for (const out of outputs) for (const secret of [token, queryToken, 'line2']) expect(out.stdout + out.stderr).not.toContain(secret)
    for (const {file, text} of [...filesUnder(dir), ...filesUnder(env.SLUICE_STATE)])
      for (const secret of [token, queryToken]) expect(text, file).not.toContain(secret)
  })

  const header = `Bearer ${token}`
  const calibrateArgs = (base = url) => ['calibrate', '--prometheus', base, '--mapping', mapping, '--window', '6h', ...until]

  it('a header value with a line break, a control character or a character outside ASCII is bad input naming the variable, never the value (--json too)', async () => {
    const bad: Array<[string, string]> = [
      [`${header}\nline2`, `holds a line break (character ${header.length + 1} of ${header.length + 6})`],
      [`${header}\r\nX-Injected: 1`, `holds a line break (character ${header.length + 1} of ${header.length + 15})`],
      [`${header}\u0001`, `holds a control character (character ${header.length + 1} of ${header.length + 1})`],
      [`Bearer ${token}é`, `holds a character outside printable ASCII (character ${header.length + 1} of ${header.length + 1})`],
      ['   ', 'is empty'],
    ]
    for (const [value, problem] of bad) {
      const asked = fake.asked.length
      const out = await run(calibrateArgs(), {[variable]: value})
      expect(out.code, problem).toBe(2)
      expect(out.stderr).toContain(
        `Error: ${mapping}:11:19: authorizationEnv: $${variable} ${problem}; it must hold the Authorization header's value on one line of printable ASCII (Bearer TOKEN). Its value is not shown`,
      )
      const json = await run([...calibrateArgs(), '--json'], {[variable]: value})
      expect(json.code).toBe(2)
      expect((JSON.parse(json.stdout) as {error: {message: string}}).error.message).toContain(`$${variable} ${problem}`)
      // Refused before anything was asked.
      expect(fake.asked.length).toBe(asked)
    }
    const assess = await run(['assess', '--scenario', 'outlook-2026', '--prometheus', url, '--mapping', mapping, '--quick'], {[variable]: `${header}\nline2`})
    expect(assess.code).toBe(2)
    expect(assess.stderr).toContain(`$${variable} holds a line break`)
  })

  it("a server that echoes the Authorization header in its 401, or in Prometheus's own error, has it taken out of the message", async () => {
    const echoes = [
      {status: 401, body: JSON.stringify({status: 'error', errorType: 'unauthorized', error: `token rejected: Authorization: ${header}`})},
      {status: 200, body: JSON.stringify({status: 'error', errorType: 'bad_data', error: `credential ${token} is expired`})},
      {status: 403, body: JSON.stringify({status: 'error', errorType: 'forbidden', error: `Authorization=${header}`})},
    ]
    for (const echo of echoes) {
      fake.failWith = echo
      const out = await run([...calibrateArgs(), '--json'], {[variable]: header})
      expect(out.code, echo.body).toBe(1)
      const message = (JSON.parse(out.stdout) as {error: {message: string}}).error.message
      expect(message).toMatch(new RegExp(`^Prometheus ${url.replace(/\./g, '\\.')}: query for \\w+ (answered HTTP \\d+|failed): `))
      expect(message).toContain('REDACTED')
      expect(message).not.toContain(token)
    }
    // The header was sent all the same.
    expect(fake.asked.at(-1)?.authorization).toBe(header)
  })

  it('a query-string token is sent with every query, and shown and written as REDACTED: the scenario, the table, --json, the assessment and its pages', async () => {
    const base = `${url}/?token=${queryToken}&tenant=mail`
    const shown = `${url}/?token=REDACTED&tenant=mail`
    const scenario = join(dir, 'mailbox.yaml')
    const asked = fake.asked.length
    const out = await run([...calibrateArgs(base), '--out', scenario], {[variable]: header})
    expect(out.code, out.stderr).toBe(0)
    const sent = fake.asked.slice(asked)
    expect(sent.length).toBeGreaterThan(0)
    // Every parameter as given: the last one too (the base's slash once went after the query string: tenant=mail/).
    const params = (a: (typeof sent)[number]) => new URL(a.url, 'http://x').searchParams
    expect(sent.every((a) => params(a).get('token') === queryToken && params(a).get('tenant') === 'mail' && a.authorization === header)).toBe(true)
    expect(readFileSync(scenario, 'utf8')).toContain(`# Calibrated by sluice calibrate from Prometheus ${shown}: pool mailbox`)
    expect(out.stdout).toContain(`Prometheus ${shown}`)
    const json = await run([...calibrateArgs(base), '--json'], {[variable]: header})
    expect(json.code).toBe(0)
    expect(json.stdout).toContain(`Prometheus ${shown}`)

    const pages = ['--svg', join(dir, 'map.svg'), '--html', join(dir, 'assess.html')]
    const assess = await run(['assess', '--scenario', scenario, '--prometheus', base, '--mapping', mapping, ...pages], {[variable]: header})
    expect([0, 3]).toContain(assess.code)
    expect(readFileSync(join(dir, 'assess.html'), 'utf8')).toContain(`Prometheus ${url}/?token=REDACTED&amp;tenant=mail`)

    // Other names a token goes by, and a server that quotes the URL back in its error.
    for (const name of ['access_token', 'api_key', 'X-Amz-Signature', 'password']) {
      fake.failWith = {status: 400, body: JSON.stringify({status: 'error', errorType: 'bad_data', error: `unknown parameter ${name}=${queryToken}`})}
      const failed = await run(calibrateArgs(`${url}/?${name}=${queryToken}`), {[variable]: header})
      expect(failed.code).toBe(1)
      expect(failed.stderr).toContain(`Error: Prometheus ${url}/?${name}=REDACTED: query for `)
      expect(failed.stderr).toContain(`unknown parameter ${name}=REDACTED`)
    }
  })

  it("a live gate's header is checked before the run: exit 2 naming the runbook's line, nothing journalled", async () => {
    const runbook = join(inputs, 'gate.yaml')
    writeFileSync(
      runbook,
      `name: prometheus-gate
description: One gate on Prometheus.
targets:
  haproxy:
    socket: ${join(dir, 'no-haproxy.sock')}
    backends:
      blue: blue
  metrics:
    source: prometheus
    url: ${url}/?access_token=${queryToken}
    authorizationEnv: ${variable}
    queries:
      error-rate: 'errors{pool="$pool"}'
steps:
  - action: check
    name: Is blue well
    gate:
      metric: error-rate
      threshold: 1
      pool: blue
`,
    )
    for (const args of [
      ['plan', runbook, '--live'],
      ['run', runbook, '--yes', '--json'],
    ]) {
      const out = await run(args, {[variable]: `${header}\nline2`})
      expect(out.code, args.join(' ')).toBe(2)
      expect(out.stdout + out.stderr).toContain(
        `${runbook}:11:23: targets.metrics.authorizationEnv: $${variable} holds a line break (character ${header.length + 1} of ${header.length + 6})`,
      )
    }
    // Refused before the run's journal and its locks: nothing to clean up, nothing to resume.
    expect(filesUnder(env.SLUICE_STATE)).toEqual([])
  })
})

describe('the scrubber (src/input/secrets.ts)', () => {
  it('shows a URL with its secrets REDACTED and nothing else changed, byte for byte', () => {
    expect(redactUrl('http://prometheus:9090')).toBe('http://prometheus:9090')
    expect(redactUrl('http://prometheus:9090/?token=abc&tenant=mail#x')).toBe('http://prometheus:9090/?token=REDACTED&tenant=mail#x')
    expect(redactUrl('https://h/p?access_token=a&API_KEY=b&X-Amz-Signature=c&step=60')).toBe(
      'https://h/p?access_token=REDACTED&API_KEY=REDACTED&X-Amz-Signature=REDACTED&step=60',
    )
    expect(redactUrl('https://admin:hunter2@h/')).toBe('https://admin:REDACTED@h/')
    expect(redactUrl('https://tokenonly@h/')).toBe('https://REDACTED@h/')
    expect(redactUrl('https://h/#access_token=abc')).toBe('https://h/#access_token=REDACTED')
  })

  it('scrubs what an endpoint answers of the secrets it was sent, as given, percent-encoded, or quoted back as name=value or Bearer …', () => {
    const secrets = ['Bearer s3cr3t-T0ken', 's3cr3t-T0ken', 'a b&c']
    expect(scrubSecrets('refused Authorization: Bearer s3cr3t-T0ken; bye', secrets)).toBe('refused Authorization: REDACTED; bye')
    expect(scrubSecrets('bad credential s3cr3t-T0ken.', secrets)).toBe('bad credential REDACTED.')
    expect(scrubSecrets('param x=a%20b%26c', secrets)).toBe('param x=REDACTED')
    expect(scrubSecrets('unknown parameter token=zz9: refused', [])).toBe('unknown parameter token=REDACTED: refused')
    expect(scrubSecrets('header Bearer eyJhbGciOiJIUzI1NiJ9.x.y expired', [])).toBe('header Bearer REDACTED expired')
    // Ordinary words and PromQL stay as they were.
    expect(scrubSecrets('Bearer authentication required for sum(rate(x{job="api"}[60s]))', [])).toBe(
      'Bearer authentication required for sum(rate(x{job="api"}[60s]))',
    )
  })

  it('says what is wrong with a header value without quoting it', () => {
    expect(headerValueProblem('Bearer abc')).toBeNull()
    expect(headerValueProblem('Bearer abc\nX: 1')).toBe('holds a line break (character 11 of 15)')
    expect(headerValueProblem('Bearer a\u0000')).toBe('holds a control character (character 9 of 9)')
    expect(headerValueProblem('Bearer é')).toBe('holds a character outside printable ASCII (character 8 of 8)')
    expect(headerValueProblem(' ')).toBe('is empty')
  })
})
