import {readdirSync, readFileSync} from 'node:fs'
import {fileURLToPath} from 'node:url'

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url))

/** The README and every page under docs/: what a user reads, by its path from the repository's root. */
export function docPages(): {path: string; text: string}[] {
  const docs = readdirSync(`${repoRoot}docs`)
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`)
  return ['README.md', ...docs].map((path) => ({path, text: readFileSync(`${repoRoot}${path}`, 'utf8')}))
}

export interface CodeBlock {
  path: string
  /** The line of the opening fence, from 1. */
  line: number
  lang: string
  lines: string[]
}

/** Every fenced block of a page, in order. */
export function codeBlocks(page: {path: string; text: string}): CodeBlock[] {
  const blocks: CodeBlock[] = []
  let open: CodeBlock | null = null
  page.text.split('\n').forEach((line, i) => {
    const fence = /^```(\S*)/.exec(line)
    if (fence && !open) open = {path: page.path, line: i + 1, lang: fence[1], lines: []}
    else if (fence && open) {
      blocks.push(open)
      open = null
    } else open?.lines.push(line)
  })
  return blocks
}

/** A page's text outside its fenced blocks: where headings and links are. */
export function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, '')
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
export function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}_\- ]/gu, '')
    .replaceAll(' ', '-')
}
