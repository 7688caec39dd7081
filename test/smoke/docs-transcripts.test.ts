import {mkdtempSync, symlinkSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {isolatedEnv, runJs, spawnCollected} from '../helpers/cli.js'
import {codeBlocks, docPages, repoRoot, type CodeBlock} from '../helpers/docs.js'

// A transcript is a code block whose first line is a command (`$ sluice …`) and whose other lines
// are what it prints on stdout, a line that is only `…` standing for lines left out. Each is run as
// written, and the lines shown must be the lines printed: from the first, in order, each stretch
// between two `…` printed together. A terminal of 200 columns, no colour, no AWS.
const transcripts = docPages().flatMap((page) => codeBlocks(page).filter((b) => b.lines[0]?.startsWith('$ ')))
const gap = (line: string) => line.trim() === '…'

/** The shown lines as stretches printed together; the first is the start of the output unless the block opens with `…`. */
function stretches(block: CodeBlock): {anchored: boolean; runs: string[][]} {
  const shown = block.lines.slice(1)
  while (shown.length > 0 && shown.at(-1)!.trim() === '') shown.pop()
  const runs: string[][] = [[]]
  for (const line of shown) {
    if (gap(line)) runs.push([])
    else runs.at(-1)!.push(line.trimEnd())
  }
  return {anchored: shown.length > 0 && !gap(shown[0]), runs: runs.filter((r) => r.length > 0)}
}

/** The first shown line that is not printed where the transcript says, or null when all are. */
function firstMismatch(block: CodeBlock, printed: string[]): string | null {
  const {anchored, runs} = stretches(block)
  let at = 0
  for (const [k, run] of runs.entries()) {
    const fits = (i: number) => run.every((line, j) => printed[i + j] === line)
    let start = k === 0 && anchored ? (fits(0) ? 0 : -1) : -1
    if (!(k === 0 && anchored)) for (let i = at; i + run.length <= printed.length && start === -1; i++) if (fits(i)) start = i
    if (start === -1) {
      // Say which line went wrong: the longest start of the stretch printed together.
      const near = run.findIndex((line) => !printed.slice(at).includes(line))
      return `${block.path}:${block.line}: ${near === -1 ? `the lines around "${run[0]}" are not printed together, in this order` : `not printed: "${run[near]}"`}`
    }
    at = start + run.length
  }
  return null
}

describe.concurrent('the transcripts in the README and docs/ print what they show (spawned)', () => {
  it('finds them', () => {
    expect(transcripts.length).toBeGreaterThanOrEqual(4)
  })

  it.each(transcripts.map((b) => [`${b.path}:${b.line}: ${b.lines[0]}`, b] as const))(
    '%s',
    async (_name, block) => {
      // A folder of its own with the repository's runbooks and scenarios, so `--write tuned.yaml` lands there.
      const cwd = mkdtempSync(join(tmpdir(), 'sluice-transcript-'))
      for (const dir of ['runbooks', 'scenarios', 'bin']) symlinkSync(join(repoRoot, dir), join(cwd, dir))
      const script = `sluice() { "${process.execPath}" "${runJs}" "$@"; }\n${block.lines[0].slice(2)}`
      const r = await spawnCollected('bash', ['-c', script], {cwd, env: {...isolatedEnv('transcript'), NO_COLOR: '1', COLUMNS: '200'}, timeoutMs: 120_000})
      expect(r.code, r.stderr).toBe(0)
      expect(
        firstMismatch(
          block,
          r.stdout.split('\n').map((l) => l.trimEnd()),
        ),
      ).toBeNull()
    },
    150_000,
  )
})
