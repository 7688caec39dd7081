import {describe, expect, it} from 'vitest'
import {readFileSync} from 'node:fs'
import {isolatedEnv, runJs, spawnCollected, type CliResult} from '../helpers/cli.js'

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8')

/** The README's "During an incident" section, up to the next heading of its level. */
function incidentSection(): string {
  const start = readme.indexOf('\n## During an incident\n')
  expect(start, 'README has a "## During an incident" section').toBeGreaterThan(-1)
  const end = readme.indexOf('\n## ', start + 1)
  return readme.slice(start, end === -1 ? undefined : end)
}

/** Each line of the section's sh block: the command as typed, and the exit code its comment promises (0 unless it says "exit N"). */
function shCommands(section: string): {line: string; exit: number}[] {
  const block = /```sh\n([\s\S]*?)```/.exec(section)
  expect(block, 'the section has a sh block').not.toBeNull()
  return block![1]
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => ({line: l, exit: Number(/#.*\bexit (\d+)/.exec(l)?.[1] ?? 0)}))
}

/** Runs a README line in bash as a user pastes it, with `sluice` the built CLI. */
function pasted(line: string, env: Record<string, string>): Promise<CliResult> {
  const script = `sluice() { "${process.execPath}" "${runJs}" "$@"; }\n${line}`
  return spawnCollected('bash', ['-c', script], {env: {NO_COLOR: '1', ...env}})
}

describe.concurrent("the README's incident section", () => {
  const section = incidentSection()

  it.each(shCommands(section))('$line', async ({line, exit}) => {
    const r = await pasted(line, isolatedEnv('readme-incident'))
    expect(r.code, r.stderr).toBe(exit)
  })
})
