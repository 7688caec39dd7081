import {readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {codeBlocks, docPages, repoRoot} from '../helpers/docs.js'

interface ManifestCommand {
  flags: Record<string, {char?: string; allowNo?: boolean; aliases?: string[]}>
}
const manifest = JSON.parse(readFileSync(`${repoRoot}oclif.manifest.json`, 'utf8')) as {commands: Record<string, ManifestCommand>}
// The plugins' commands (package.json's oclif.plugins), which are not in sluice's own manifest.
const pluginCommands = new Set(['help', 'autocomplete'])
// Named in the docs on purpose as what is not a command: each must stay not one.
const notCommands = new Map([['rn', 'the mistyped command whose "did you mean run?" the README shows']])

/** Every `sluice …` a page shows: in inline code, and on the lines of its code blocks. */
function invocations(): {where: string; words: string[]}[] {
  const out: {where: string; words: string[]}[] = []
  for (const page of docPages()) {
    for (const m of page.text.matchAll(/`((?:sluice|\.\/bin\/run\.js) [^`]+)`/g))
      out.push({where: `${page.path}:${page.text.slice(0, m.index).split('\n').length}`, words: m[1].split(/\s+/).slice(1)})
    for (const block of codeBlocks(page))
      block.lines.forEach((line, i) => {
        const m = /^(?:\$ )?(?:sluice|\.\/bin\/run\.js|npm ci && (?:npm link && sluice|\.\/bin\/run\.js)) (.*)$/.exec(line)
        if (m) out.push({where: `${block.path}:${block.line + 1 + i}`, words: m[1].replace(/#.*/, '').trim().split(/\s+/)})
      })
  }
  return out
}

/** The command a line names (its longest run of words that is one), and the flags it passes. */
function parse(words: string[]): {id: string | null; flags: string[]} {
  let id: string | null = null
  for (let n = 1; n <= words.length; n++) {
    const candidate = words.slice(0, n).join(':')
    if (candidate in manifest.commands) id = candidate
  }
  const flags = words.flatMap((w) => [...w.matchAll(/(?:^|[[|(\\])(--?[a-z][a-z0-9-]*)/g)].map((m) => m[1]))
  return {id, flags}
}

describe('every sluice command the README and docs/ show is one sluice has, with flags it takes', () => {
  const found = invocations()

  it('finds the invocations on every page', () => {
    expect(found.length).toBeGreaterThan(60)
    // The set-up's own, after `npm ci && npm link &&`.
    expect(found.find((f) => f.where === 'README.md:23')?.words.slice(0, 2)).toEqual(['run', 'runbooks/outlook-staged-return.yaml'])
  })

  it('names only commands that exist (or, by name, the few it shows as not commands)', () => {
    const unknown = found.filter(({words}) => {
      const first = words[0]
      if (first.startsWith('-') || first === '...' || pluginCommands.has(first) || notCommands.has(first)) return false
      return parse(words).id === null
    })
    expect(unknown.map((u) => `${u.where}: sluice ${u.words.join(' ')}`)).toEqual([])
    for (const name of notCommands.keys()) expect(name in manifest.commands, `${name} is a command now: show it as one`).toBe(false)
  })

  it('passes each command only flags it has (by name, short name, alias, or --no- for a negatable one)', () => {
    const bad: string[] = []
    for (const {where, words} of found) {
      const {id, flags} = parse(words)
      if (id === null) continue
      const own = manifest.commands[id].flags
      const known = new Set(
        Object.entries(own).flatMap(([name, f]) => [
          `--${name}`,
          ...(f.char ? [`-${f.char}`] : []),
          ...(f.aliases ?? []).map((a) => `--${a}`),
          ...(f.allowNo ? [`--no-${name}`] : []),
        ]),
      )
      for (const flag of flags) if (!known.has(flag) && flag !== '--help') bad.push(`${where}: sluice ${id.replace(':', ' ')} has no ${flag}`)
    }
    expect(bad).toEqual([])
  })
})
