import {existsSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {afterEach, describe, it, expect} from 'vitest'
import {sluiceInProcess} from '../helpers/command.js'
import {expectBadInput} from '../helpers/expect-cli.js'

// The lengths of time an operator (or a test) may set in the environment. Each test sets its own
// variables; all are put back afterwards, since the unit project shares its workers between files.
const names = ['SLUICE_STATE', 'SLUICE_LEASE_SECONDS', 'SLUICE_AWS_DEADLINE_SECONDS', 'AWS_ENDPOINT_URL', 'AWS_REGION'] as const
const saved = Object.fromEntries(names.map((n) => [n, process.env[n]]))
afterEach(() => {
  for (const n of names) {
    if (saved[n] === undefined) delete process.env[n]
    else process.env[n] = saved[n]
  }
})

function setEnv(values: Partial<Record<(typeof names)[number], string>>): void {
  for (const n of names) delete process.env[n]
  Object.assign(process.env, values)
}

const dir = () => mkdtempSync(join(tmpdir(), 'sluice-env-lengths-'))

describe('lengths of time from the environment, refused when bad (in process)', () => {
  it('a bad $SLUICE_LEASE_SECONDS is exit 2 naming it, for any command that opens the state', async () => {
    setEnv({SLUICE_STATE: join(dir(), 'state'), SLUICE_LEASE_SECONDS: '30s'})
    const {exit, stdout, stderr} = await sluiceInProcess(['locks'])
    expectBadInput(
      {code: exit, stdout, stderr: stderr.replace(/^using .*\n/m, '')},
      `$SLUICE_LEASE_SECONDS (a lock's lease): expected seconds from 1 to 3600 (unset: 30), got "30s"`,
    )
  })

  it('a bad $SLUICE_AWS_DEADLINE_SECONDS stops a live run on AWS with exit 2 naming it, before it calls, journals or locks anything', async () => {
    const home = dir()
    const state = join(home, 'state')
    const file = join(home, 'ramp.yaml')
    writeFileSync(
      file,
      `name: env-deadline
targets:
  dns: {zone: Z1, record: app.example.com., ttl: 1, sets: {blue: blue, green: green}}
steps:
  - {action: ramp, set: green, schedule: [50, 100], bake: 1}
`,
    )
    // Nothing listens there: a call that was made would fail with exit 1, not 2.
    setEnv({SLUICE_STATE: state, SLUICE_AWS_DEADLINE_SECONDS: '0', AWS_ENDPOINT_URL: 'http://127.0.0.1:9', AWS_REGION: 'us-east-1'})
    const {exit, stdout, stderr} = await sluiceInProcess(['run', file, '--yes'])
    expect(exit, stderr).toBe(2)
    expect(stdout).toBe('')
    expect(stderr).toMatch(
      /^Error: \$SLUICE_AWS_DEADLINE_SECONDS \(how long one AWS call may take, retries included\): expected seconds from 1 to 600 \(unset: 30\), got "0"$/m,
    )
    expect(stderr).not.toMatch(/GetCallerIdentity|\bat .*\.js:\d+/)
    expect(existsSync(join(state, 'runs')), 'no journal was written').toBe(false)
    expect(existsSync(join(state, 'locks')), 'no lock was taken').toBe(false)
  })
})
