import {execFileSync, spawn} from 'node:child_process'
import {closeSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeFileSync, writeSync} from 'node:fs'
import {join} from 'node:path'
import {afterEach, describe, expect, it} from 'vitest'
import {runJs} from '../helpers/cli.js'
import {inProcess as sluice} from '../helpers/command.js'
import {runStartFields} from '../helpers/journal-entries.js'
import {LocalStore} from '../../src/local/local-store.js'
import {journalOf, onlyRunId, ramp, runbook as runbookFor, useStateFixture, weightsOf, type Fixture} from './state-fixture.js'

let fx: Fixture
useStateFixture((current) => (fx = current))
const runbook = (name: string, steps: string) => runbookFor(fx, name, steps)

/** A small tmpfs of its own, unmounted after the test. */
const mounts: string[] = []
function smallDisk(size: string): string {
  const dir = join(fx.dir, `disk-${mounts.length}`)
  mkdirSync(dir)
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir])
  mounts.push(dir)
  return dir
}
afterEach(() => {
  for (const dir of mounts.splice(0)) execFileSync('umount', [dir])
})

/** Fills a file system to the last byte. */
function fill(dir: string): string {
  const file = join(dir, 'filler')
  const fd = openSync(file, 'w')
  for (const size of [65536, 4096, 512, 64, 8, 1]) {
    const chunk = Buffer.alloc(size, 120)
    try {
      for (;;) if (writeSync(fd, chunk) < size) break
    } catch {
      // full at this size; go on with smaller writes
    }
  }
  closeSync(fd)
  return file
}

const root = process.getuid?.() === 0

describe.runIf(root)('a full disk', () => {
  it('stops the run before its next change, names the file, leaves no torn line, lets go of its locks; resume completes once there is space', async () => {
    const disk = smallDisk('64k')
    const env = {...fx.env, SLUICE_STATE: join(disk, 'state')}
    const file = runbook('ramp', ramp)
    const child = spawn(process.execPath, [runJs, 'run', file, '--yes'], {env: {...process.env, NO_COLOR: '1', ...env}, stdio: ['ignore', 'pipe', 'pipe']})
    let stderr = ''
    let filler = ''
    child.stderr.on('data', (d) => {
      stderr += d
      if (!filler && /blue at 10%/.test(stderr)) filler = fill(disk)
    })
    const code = await new Promise<number | null>((r) => child.on('close', r))
    expect(filler, stderr).not.toBe('')
    expect(code, stderr).toBe(1)
    const runId = await onlyRunId(env)
    expect(stderr).toMatch(
      new RegExp(
        `stopped before the next change: .*cannot \\w[\\w ]* ${disk}/state/\\S+: no space left on device \\(ENOSPC\\).*free some space there, then continue with \`sluice resume ${runId}\``,
      ),
    )
    expect(stderr).not.toMatch(/Unhandled|\n\s+at /)
    // Every line whole: the journal reads back with nothing torn.
    const text = readFileSync(join(disk, 'state', 'runs', `${runId}.jsonl`), 'utf8')
    expect(text.endsWith('\n')).toBe(true)
    const journal = await journalOf(runId, env)
    expect(journal.torn).toBeNull()
    const locks = await sluice(['locks', '--json'], {env})
    expect(JSON.parse(locks.stdout)).toEqual({locks: []})
    expect((await weightsOf(fx)).blue).toBeLessThan(100)

    rmSync(filler)
    const resumed = await sluice(['resume', runId, '--yes'], {env})
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(await weightsOf(fx)).toEqual({blue: 100, green: 0})
    expect((await journalOf(runId, env)).status).toBe('completed')
  }, 120_000)

  it('an entry that does not fit is not written at all: the journal goes back to its last whole line', async () => {
    const disk = smallDisk('16k')
    const store = new LocalStore(join(disk, 'state'))
    const runId = '20261104-100000-aaaa'
    const path = join(disk, 'state', 'runs', `${runId}.jsonl`)
    const big = 'x'.repeat(5000)
    let error: unknown
    let seq = 1
    for (; seq < 20 && !error; seq++) {
      const size = seq === 1 ? 0 : statSync(path).size
      // A journal begins with its run-start entry; the rest are notes, each as big.
      const first = {type: 'run-start', ...runStartFields(runId)}
      error = await store.append(runId, {seq, at: new Date().toISOString(), ...(seq === 1 ? first : {type: 'note'}), text: big}).catch((e: unknown) => e)
      if (error) expect(statSync(path).size).toBe(size)
    }
    expect((error as Error).message).toBe(`cannot append entry ${seq - 1} to ${path}: no space left on device (ENOSPC)`)
    const read = await store.read(runId)
    expect(read.torn).toBeNull()
    expect(read.entries.map((e) => e.seq)).toEqual(Array.from({length: seq - 2}, (_, i) => i + 1))
    await store.release([], runId)
  })
})

describe('damaged state files are reported with file and line', () => {
  const RUN = '20261104-100000-aaaa'
  const start = {seq: 1, at: '2026-11-04T10:00:00.000Z', type: 'run-start', ...runStartFields(RUN)}
  const state = () => fx.env.SLUICE_STATE
  // Every command that reads a journal must refuse a damaged one alike.
  const readers = [
    ['journal', RUN],
    ['resume', RUN, '--yes'],
    ['rollback', RUN, '--yes'],
  ]
  /** The tests below need a journal in a state no run leaves it in, so they write it by hand. */
  function plantJournal(text: string): string {
    mkdirSync(join(state(), 'runs'), {recursive: true})
    const path = join(state(), 'runs', `${RUN}.jsonl`)
    writeFileSync(path, text)
    return path
  }

  it.each([
    ['empty', '', "the journal is empty; a run's journal begins with its run-start entry"],
    [
      'a run-start naming no runbook',
      `${JSON.stringify({...start, runbookFile: undefined})}\n`,
      'a run-start entry without what it needs: runbookFile: expected the runbook it ran: a runbookFile (a path) or a runbookInput',
    ],
    [
      'one that begins with a step',
      `${JSON.stringify({...start, type: 'step-start', step: 0, title: 'x'})}\n`,
      'the journal begins with a step-start entry, not run-start',
    ],
  ])('a journal that is %s: journal, resume and rollback name FILE:1 (exit 4)', async (_what, text, problem) => {
    const path = plantJournal(text)
    for (const args of readers) {
      const result = await sluice(args, {env: fx.env})
      expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(4)
      expect(result.stderr).toContain(`Error: ${path}:1: ${problem}`)
    }
  })

  it.each([
    ['[1,2,3]', 'not a journal entry: expected a JSON object, got an array'],
    [
      '{"seq":2,"at":"2026-11-04T10:00:01.000Z","type":"mutation"}',
      'a mutation entry without what it needs: mutation: Invalid input: expected object, received undefined',
    ],
  ])(
    'a journal line %s: journal, resume and rollback name FILE:LINE and go no further',
    async (line, problem) => {
      const path = plantJournal(`${JSON.stringify(start)}\n${line}\n`)
      for (const args of readers) {
        const result = await sluice(args, {env: fx.env})
        expect(result.code, `${args.join(' ')}: ${result.stderr}`).toBe(4)
        // The store's line first, as every command that uses state says it; then the one error.
        expect(result.stderr).toBe(`using local state ${state()} ($SLUICE_STATE)\nError: ${path}:2: ${problem}\n`)
      }
      const listed = await sluice(['journal'], {env: fx.env})
      expect(listed.stdout).toContain(`${RUN}  unreadable: ${path}:2: ${problem}`)
    },
    120_000,
  )

  it.each([
    ['{"by": "alice", "reason": "inc', ':1: the freeze record is not JSON'],
    ['[]', ':1: not a freeze record: Invalid input: expected object, received array'],
  ])(
    'a freeze file %j: freeze check exits 4 naming it; unfreeze --force clears it',
    async (text, problem) => {
      mkdirSync(state(), {recursive: true})
      const path = join(state(), 'freeze.json')
      writeFileSync(path, text)
      const checked = await sluice(['freeze', 'check'], {env: fx.env})
      expect(checked.code).toBe(4)
      expect(checked.stderr).toContain(`Error: ${path}${problem}`)
      expect(checked.stderr).toContain('`sluice unfreeze --force` clears it')
      expect(checked.stdout).not.toContain('undefined')
      const cleared = await sluice(['unfreeze', '--force'], {env: fx.env})
      expect(cleared.code, cleared.stderr).toBe(0)
      expect((await sluice(['freeze', 'check'], {env: fx.env})).code).toBe(0)
    },
    120_000,
  )
})

describe('run ids and files', () => {
  it.each([['journal'], ['resume'], ['rollback']])(
    '%s takes only a run id: anything else, or an unknown one, exits 2',
    async (command) => {
      for (const id of ['../../../../tmp/x', 'x', '20261104-100000-AAAA']) {
        const result = await sluice([command, id, '--yes'].slice(0, command === 'journal' ? 2 : 3), {env: fx.env})
        expect(result.code, result.stderr).toBe(2)
        expect(result.stderr).toContain(`Error: run id ${JSON.stringify(id)}: expected YYYYMMDD-HHMMSS-xxxx`)
      }
      const unknown = await sluice([command, '20261104-100000-aaaa', '--yes'].slice(0, command === 'journal' ? 2 : 3), {env: fx.env})
      expect(unknown.code, unknown.stderr).toBe(2)
      expect(unknown.stderr).toContain('Error: no run 20261104-100000-aaaa in local state')
    },
    120_000,
  )

  it('state files are 0600 and directories 0700 whatever the umask', async () => {
    const old = process.umask(0)
    try {
      const frozen = await sluice(['freeze', '--reason', 'modes'], {env: fx.env})
      expect(frozen.code, frozen.stderr).toBe(0)
    } finally {
      process.umask(old)
    }
    const runId = await onlyRunId(fx.env)
    const mode = (p: string) => (statSync(join(fx.env.SLUICE_STATE, p)).mode & 0o777).toString(8)
    expect([mode('.'), mode('runs'), mode('locks')]).toEqual(['700', '700', '700'])
    expect([mode(`runs/${runId}.jsonl`), mode('freeze.json')]).toEqual(['600', '600'])
  }, 120_000)
})

describe.runIf(root)('another user', () => {
  it('is told which file it may not read, and which permission it lacks (never "holds no locks", never ENOTDIR alone)', async () => {
    const frozen = await sluice(['freeze', '--reason', 'owned by root'], {env: fx.env})
    expect(frozen.code, frozen.stderr).toBe(0)
    const runId = await onlyRunId(fx.env)
    execFileSync('chmod', ['755', fx.dir])
    const asNobody = (args: string[]) => {
      try {
        execFileSync('setpriv', ['--reuid=65534', '--regid=65534', '--clear-groups', process.execPath, runJs, ...args], {
          cwd: '/tmp',
          env: {...process.env, ...fx.env, HOME: '/tmp', NO_COLOR: '1'},
          stdio: 'pipe',
        })
        return {code: 0, stderr: ''}
      } catch (error) {
        const e = error as {status: number; stderr: Buffer}
        return {code: e.status, stderr: e.stderr.toString()}
      }
    }
    const listed = asNobody(['journal'])
    expect(listed.code).toBe(1)
    expect(listed.stderr).toBe(
      `using local state ${fx.env.SLUICE_STATE} ($SLUICE_STATE)\nError: cannot list ${fx.env.SLUICE_STATE}/runs: permission denied (EACCES): uid 65534 needs read and write permission on it and on its directory; ${fx.env.SLUICE_STATE} belongs to uid 0 with mode 0700\n`,
    )
    const resumed = asNobody(['resume', runId, '--yes'])
    expect(resumed.code).toBe(1)
    expect(resumed.stderr).toContain(`Error: cannot read ${fx.env.SLUICE_STATE}/runs/${runId}.jsonl: permission denied (EACCES)`)
  }, 120_000)
})
