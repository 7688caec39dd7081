import {mkdtempSync, readdirSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {parse, stringify} from 'yaml'
import {InputError} from '../../src/errors.js'
import {rehearse} from '../../src/wiring/rehearsal.js'
import {loadRunbookFile} from '../../src/loader/load-runbook.js'
import {loadScenario, pickSetups} from '../../src/sim/scenario/load-scenario.js'
import {simulateSetups} from '../../src/sim/simulate.js'
import {Random} from '../../src/sim/random.js'
import {RecordingIO} from '../helpers/fakes.js'

// A seeded fuzzer over the shipped runbooks and scenarios: each case mutates one file (a key
// removed, added or renamed; a value of another type, size or sign; the text cut, re-encoded,
// given a NUL, a BOM or CRLF) and goes through validate and a dry run in process. Every case
// must end as a run or as bad input naming file:line:column, never as another error, and
// within 2 s. SLUICE_FUZZ_SEED reruns one seed; a failure prints its seed and the input.

const runbooks = readdirSync('runbooks')
  .filter((f) => f.endsWith('.yaml'))
  .map((f) => ({name: f, text: readFileSync(join('runbooks', f), 'utf8')}))
const scenarios = readdirSync('scenarios')
  .filter((f) => f.endsWith('.yaml'))
  .map((f) => ({name: f, text: readFileSync(join('scenarios', f), 'utf8')}))
const dir = mkdtempSync(join(tmpdir(), 'sluice-fuzz-'))
const seed = Number(process.env.SLUICE_FUZZ_SEED ?? 20261201)
const CASES = 2000
const LIMIT_MS = 2000

type Rand = () => number
const pick = <T>(r: Rand, list: readonly T[]): T => list[Math.floor(r() * list.length)]

const values = (r: Rand): unknown =>
  pick(r, [
    () => -1,
    () => 0,
    () => 1e308,
    () => -1e308,
    () => 1.5,
    () => 2 ** 53 + 1,
    () => Math.floor(r() * 1000),
    () => '',
    () => 'x'.repeat(1 + Math.floor(r() * 5000)),
    () => '\u001b[2J',
    () => '名前',
    () => 'true',
    () => '../../etc/passwd',
    () => true,
    () => null,
    () => [],
    () => [1, 'a', null],
    () => ({}),
    () => ({nested: {deeper: [1, 2, 3]}}),
  ])()

/** Every path to a value in a parsed document. */
function paths(value: unknown, at: Array<string | number> = []): Array<Array<string | number>> {
  if (Array.isArray(value)) return [at, ...value.flatMap((v, i) => paths(v, [...at, i]))]
  if (value && typeof value === 'object') return [at, ...Object.entries(value).flatMap(([k, v]) => paths(v, [...at, k]))]
  return [at]
}

function mutateData(r: Rand, text: string): string {
  const data = parse(text) as Record<string, unknown>
  const all = paths(data).filter((p) => p.length > 0)
  const path = pick(r, all)
  const parent = path.slice(0, -1).reduce<any>((node, key) => node[key], data)
  const key = path.at(-1)!
  switch (pick(r, ['replace', 'delete', 'add', 'rename', 'grow'] as const)) {
    case 'replace':
      parent[key] = values(r)
      break
    case 'delete':
      if (Array.isArray(parent)) parent.splice(Number(key), 1)
      else delete parent[key]
      break
    case 'add':
      if (Array.isArray(parent)) parent.push(values(r))
      else parent[`unknown${Math.floor(r() * 100)}`] = values(r)
      break
    case 'rename':
      if (!Array.isArray(parent)) {
        parent[`${String(key)}x`] = parent[key]
        delete parent[key]
      }
      break
    case 'grow':
      if (Array.isArray(parent[key])) parent[key] = Array.from({length: 200}, () => parent[key][0] ?? 1)
      else parent[key] = values(r)
      break
  }
  return stringify(data)
}

function mutateText(r: Rand, text: string): string | Buffer {
  switch (pick(r, ['cut', 'nul', 'bom', 'crlf', 'bytes', 'indent', 'tab'] as const)) {
    case 'cut':
      return text.slice(0, Math.floor(r() * text.length))
    case 'nul': {
      const at = Math.floor(r() * text.length)
      return `${text.slice(0, at)}\0${text.slice(at)}`
    }
    case 'bom':
      return `\ufeff${text}`
    case 'crlf':
      return text.replace(/\n/g, '\r\n')
    case 'bytes': {
      const bytes = Buffer.from(text)
      for (let i = 0; i < 4; i++) bytes[Math.floor(r() * bytes.length)] = Math.floor(r() * 256)
      return bytes
    }
    case 'indent': {
      const lines = text.split('\n')
      const i = Math.floor(r() * lines.length)
      lines[i] = ` ${lines[i]}`
      return lines.join('\n')
    }
    case 'tab':
      return text.replace(/^ {2}/m, '\t')
  }
}

const located = /^\S+:\d+:\d+: |^\(command line\)|^--/

async function oneCase(n: number): Promise<'ran' | 'refused'> {
  const random = new Random(seed + n)
  const r: Rand = () => random.next()
  const isRunbook = n % 5 < 3
  const source = pick(r, isRunbook ? runbooks : scenarios)
  const mutated = r() < 0.6 ? mutateData(r, source.text) : mutateText(r, source.text)
  const file = join(dir, `case-${n}-${source.name}`)
  writeFileSync(file, mutated)
  const started = performance.now()
  try {
    if (isRunbook) {
      const runbook = loadRunbookFile(file)
      // One seed: the input is what is under test, and the default's ten rehearse the same input ten times.
      await rehearse(runbook, {operator: 'fuzz', io: new RecordingIO('no-tty'), signal: new AbortController().signal}, {pace: null, seeds: 1})
    } else {
      const {scenario} = loadScenario(file)
      // Scenarios may ask for up to 15 s of work by design (scenarioLimits); the fuzzer simulates the ones a dry run does in a moment.
      if ((scenario.duration / scenario.tick) * scenario.pools.reduce((s, p) => s + (p.servers ?? 0), 0) <= 5e6)
        simulateSetups(scenario, pickSetups(scenario, 'all').slice(0, 1))
    }
  } catch (error) {
    if (!(error instanceof InputError))
      throw new Error(
        `case ${n} (seed ${seed + n}, from ${source.name}) threw ${(error as Error).name}: ${(error as Error).message}\n--- input ---\n${String(mutated).slice(0, 2000)}`,
      )
    for (const problem of error.problems)
      if (!located.test(problem)) throw new Error(`case ${n} (seed ${seed + n}, from ${source.name}): a refusal without a location: ${problem}`)
    return finish('refused')
  }
  return finish('ran')

  function finish(outcome: 'ran' | 'refused'): 'ran' | 'refused' {
    const ms = performance.now() - started
    if (ms > LIMIT_MS) throw new Error(`case ${n} (seed ${seed + n}, from ${source.name}) took ${Math.round(ms)} ms`)
    return outcome
  }
}

describe(`fuzzing the shipped runbooks and scenarios (${CASES} cases from seed ${seed})`, () => {
  it('every mutated input runs, or is refused as bad input with a location; none hangs', async () => {
    const counts = {ran: 0, refused: 0}
    for (let n = 0; n < CASES; n++) counts[await oneCase(n)]++
    console.log(`fuzz seed ${seed}: ${counts.ran} mutated inputs ran, ${counts.refused} were refused with a location`)
    // Both kinds in numbers: a fuzzer whose every case is refused (or runs) exercises one path only.
    expect(counts.ran).toBeGreaterThan(CASES / 10)
    expect(counts.refused).toBeGreaterThan(CASES / 10)
  }, 600_000)
})
