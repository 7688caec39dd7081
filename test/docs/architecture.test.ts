import {existsSync, readdirSync, readFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {prose, repoRoot} from '../helpers/docs.js'

// ARCHITECTURE.md tells a contributor where each kind of change goes; a path it names that has
// moved sends them to a folder that is not there. Every link and every path it names must exist.
const text = readFileSync(join(repoRoot, 'ARCHITECTURE.md'), 'utf8')

describe('ARCHITECTURE.md names only what is there', () => {
  it('every link is to a file or folder in the repository', () => {
    const links = [...prose(text).matchAll(/\]\(([^)\s#]+)[^)]*\)/g)].map((m) => m[1]).filter((t) => !/^[a-z]+:/.test(t))
    expect(links.length).toBeGreaterThan(40)
    expect(links.filter((target) => !existsSync(join(repoRoot, target)))).toEqual([])
  })

  it('every path in backquotes is in the repository', () => {
    const paths = [...prose(text).matchAll(/`((?:src|test|commands|bench|docs|scripts|runbooks|scenarios|\.ci)\/[^`\s]*)`/g)].map((m) => m[1])
    expect(paths.filter((path) => !existsSync(join(repoRoot, path)))).toEqual([])
  })

  it('the layers it lists are the folders under src/, each named once', () => {
    const named = new Set([...text.matchAll(/\[src\/([a-z-]+)\/\]/g)].map((m) => m[1]))
    const folders = readdirSync(join(repoRoot, 'src'), {withFileTypes: true})
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
    expect(folders.filter((f) => !named.has(f))).toEqual([])
  })
})
