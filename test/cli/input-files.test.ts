import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {performance} from 'node:perf_hooks'
import {describe, expect, it} from 'vitest'
import {aliasBomb} from '../helpers/bad-runbooks.js'
import {isolatedInProcess} from '../helpers/command.js'

// Files that are not runbooks at all, through the CLI (in process): refused as bad input on one
// line that says where, promptly, with no stack trace. The corpus (test/runbook/corpus.test.ts)
// covers them through the loader; this is the command, its exit code and its output.

const sluice = isolatedInProcess('input-files')
const dir = mkdtempSync(join(tmpdir(), 'sluice-input-files-'))

const cases: Array<{name: string; content: () => string | Buffer; message: RegExp}> = [
  {
    name: 'a 50 MB file',
    content: () => `name: big\n# ${'x'.repeat(50 * 1024 * 1024)}\nsteps: []\n`,
    message: /:1:1: the file is \d+ bytes; expected at most 1048576 bytes \(1 MiB\)$/,
  },
  {name: 'an alias bomb', content: () => aliasBomb('bomb'), message: /:3:9: aliases expand to too many values \(more than 100 per alias\)/},
  {name: 'a NUL byte', content: () => 'name: nul\nsteps:\n  - {action: freeze, reason: "a\0b"}\n', message: /:3:32: a NUL character; expected text$/},
  {
    name: 'invalid UTF-8',
    content: () => Buffer.concat([Buffer.from('name: latin\ndescription: caf'), Buffer.from([0xe9]), Buffer.from('\nsteps: []\n')]),
    message: /:2:17: invalid UTF-8 at byte 28; expected a UTF-8 text file$/,
  },
  {
    name: '!!js/function',
    content: () => 'name: js\nsteps:\n  - {action: freeze, reason: !!js/function "function () {}"}\n',
    message: /:3:30: unknown tag: tag:yaml\.org,2002:js\/function; expected plain YAML values$/,
  },
]

describe('sluice validate on files that are not runbooks', () => {
  // What the CLI takes to start and validate a good runbook on this machine, measured just before
  // each case so both see the same load: a refusal may take up to 2 s beyond it, and no more.
  const startup = async (): Promise<number> => {
    const started = performance.now()
    const {code} = await sluice(['validate', 'naive-full-return'])
    expect(code).toBe(0)
    return performance.now() - started
  }

  it.each(cases.map((c) => [c.name, c] as const))('%s: exit 2, one line with file:line:column, promptly, no stack', async (_name, c) => {
    const file = join(dir, `${c.name.replace(/\W+/g, '-')}.yaml`)
    writeFileSync(file, c.content())
    const baseline = await startup()
    const started = performance.now()
    const {code, stdout, stderr} = await sluice(['validate', file])
    const elapsed = performance.now() - started
    expect(code, stderr).toBe(2)
    expect(stdout).toBe('')
    const [problem, ...rest] = stderr.trimEnd().split('\n')
    expect(rest).toEqual(['1 of 1 runbooks are invalid'])
    expect(problem.startsWith(`${file}:`), problem).toBe(true)
    expect(problem).toMatch(c.message)
    expect(stderr).not.toMatch(/Error:|TypeError|RangeError|\bat .*\.js:\d+/)
    // A bound on a hang (or on parsing 50 MB), not a speed test: on two cores shared with the
    // rest of the suite a command can wait seconds for its turn, so the bound is generous.
    expect(elapsed - baseline).toBeLessThan(10_000)
  })
})
