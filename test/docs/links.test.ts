import {existsSync} from 'node:fs'
import {dirname, join, normalize} from 'node:path'
import {describe, expect, it} from 'vitest'
import {anchorOf, docPages, prose, repoRoot} from '../helpers/docs.js'

const pages = docPages()
const anchors = new Map(pages.map((p) => [p.path, new Set([...prose(p.text).matchAll(/^#+ (.+)$/gm)].map((m) => anchorOf(m[1])))]))

describe('the README and docs/ link only to what is there', () => {
  it('has the reference pages the README links to', () => {
    expect(pages.length).toBeGreaterThan(5)
  })

  it.each(pages.map((p) => [p.path, p] as const))('%s: every relative link names a file, and every #anchor a heading in it', (_path, page) => {
    const broken: string[] = []
    for (const [, target] of prose(page.text).matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target)) continue
      const [file, anchor] = target.split('#')
      const path = file === '' ? page.path : normalize(join(dirname(page.path), file))
      if (!existsSync(join(repoRoot, path))) broken.push(`${target}: no file ${path}`)
      else if (anchor !== undefined && !anchors.get(path)?.has(anchor)) broken.push(`${target}: no heading #${anchor} in ${path}`)
    }
    expect(broken).toEqual([])
  })
})
