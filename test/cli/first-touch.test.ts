import {describe, expect, it} from 'vitest'
import {isolatedInProcess} from '../helpers/command.js'

const sluice = isolatedInProcess('first-touch')
const version = (JSON.parse((await import('node:fs')).readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {version: string}).version

// What a new user types first, under stress: the version, an argument a command does not take, no credentials.
// Colour off on a real terminal is test/smoke/terminal.test.ts.
describe('the first commands a user types', () => {
  it('-v, --version and version print the same version line; version --json gives its parts', async () => {
    const [short, long, command, json] = await Promise.all([sluice(['-v']), sluice(['--version']), sluice(['version']), sluice(['version', '--json'])])
    for (const r of [short, long, command]) {
      expect(r.code, r.stderr).toBe(0)
      expect(r.stdout.trim()).toBe(`sluice/${version} ${process.platform}-${process.arch} node-${process.version}`)
    }
    expect(JSON.parse(json.stdout)).toEqual({version, platform: process.platform, arch: process.arch, node: process.version})
  })

  it('help lists --no-color among the global flags (what it does on a terminal: test/smoke/terminal.test.ts)', async () => {
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
