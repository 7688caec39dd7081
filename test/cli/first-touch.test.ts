import {describe, expect, it} from 'vitest'
import {spawn} from 'node:child_process'
import {isolatedEnv, isolatedSluice, runJs} from '../helpers/cli.js'

const sluice = isolatedSluice('first-touch')
const version = (JSON.parse((await import('node:fs')).readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {version: string}).version

// What a new user types first, under stress: the version, colour off, an argument a command does not take.
describe('the first commands a user types', () => {
  it('-v, --version and version print the same version line; version --json gives its parts', async () => {
    const [short, long, command, json] = await Promise.all([sluice(['-v']), sluice(['--version']), sluice(['version']), sluice(['version', '--json'])])
    for (const r of [short, long, command]) {
      expect(r.code, r.stderr).toBe(0)
      expect(r.stdout.trim()).toBe(`sluice/${version} ${process.platform}-${process.arch} node-${process.version}`)
    }
    expect(JSON.parse(json.stdout)).toEqual({version, platform: process.platform, arch: process.arch, node: process.version})
  })

  it('--no-color takes the colour out of what a terminal would show in colour, as NO_COLOR does', async () => {
    // A real terminal, from util-linux's script(1): on one, the report and its chart are coloured.
    const onTerminal = (args: string[]) =>
      new Promise<{code: number | null; out: string}>((resolve, reject) => {
        const line = [process.execPath, runJs, ...args].map((a) => `'${a}'`).join(' ')
        const child = spawn('script', ['-qec', line, '/dev/null'], {env: {...process.env, NO_COLOR: undefined, ...isolatedEnv('first-touch-tty')}})
        let out = ''
        child.stdout.on('data', (d) => (out += d))
        child.on('error', reject)
        child.on('close', (code) => resolve({code, out}))
      })
    const [coloured, plain] = await Promise.all([
      onTerminal(['simulate', '--setup', 'no-guard']),
      onTerminal(['simulate', '--setup', 'no-guard', '--no-color']),
    ])
    expect(coloured.code).toBe(0)
    expect(coloured.out).toContain('\x1b[')
    expect(plain.code).toBe(0)
    expect(plain.out).not.toContain('\x1b[')
    // Without colour the lines keep apart by their patterns.
    expect(plain.out).toMatch(/━ completed \(rps\) {2}╍ offered \(rps\)/)
    const help = await sluice(['simulate', '--help'])
    expect(help.stdout).toMatch(/GLOBAL FLAGS[\s\S]*--no-color/)
  })

  it('an argument a command does not take is named, exit 2, with where to look; a mistyped command still gets its guess', async () => {
    const extra = await sluice(['simulate', 'outlook-2026'])
    expect(extra.code).toBe(2)
    expect(extra.stderr.trim()).toBe('Error: simulate takes no argument "outlook-2026"; `sluice simulate --help` shows its flags')
    const nested = await sluice(['freeze', 'check', 'now'])
    expect(nested.code).toBe(2)
    expect(nested.stderr).toContain('Error: freeze check takes no argument "now"')
    const typo = await sluice(['simulat'])
    expect(typo.code).toBe(2)
    expect(typo.stderr).toContain('did you mean simulate?')
  })

  it("no credentials anywhere: the AWS CLI's words and how to give them, naming the call and resource, exit 1", async () => {
    // An endpoint nothing listens on: the credentials are looked for before any request is sent.
    const r = await sluice(['status', 'runbooks/outlook-staged-return.yaml'], {env: {AWS_ENDPOINT_URL: 'http://127.0.0.1:9', AWS_REGION: 'eu-west-1'}})
    expect(r.code).toBe(1)
    expect(r.stderr).toMatch(
      /^Error: Route53 ListResourceRecordSets on hosted zone Z04517273E3NUXJ3CHVE9 failed: NoCredentials: Unable to locate credentials\. You can configure credentials by running "aws configure", name a profile with --profile or AWS_PROFILE/m,
    )
    expect(r.stderr).not.toContain('CredentialsProviderError')
  })
})
