import {existsSync, mkdirSync} from 'node:fs'
import {join} from 'node:path'
import {chromium, type Browser, type Page} from 'playwright-core'
import {packageRoot} from '../../../src/package-root.js'

/** Debian's Chromium (`apt-get install -y chromium`, which .ci/run does): no browser is downloaded. */
const executable = process.env.SLUICE_CHROMIUM ?? '/usr/bin/chromium'

export async function launch(): Promise<Browser> {
  if (!existsSync(executable)) throw new Error(`no browser at ${executable}: apt-get install -y chromium (or set SLUICE_CHROMIUM to one)`)
  // Root in a container has no user namespace to sandbox into.
  return chromium.launch({executablePath: executable, args: ['--no-sandbox']})
}

/** Where the browser tests keep their screenshots, for a person to look at after a run. */
export const artifacts = join(packageRoot, '.artifacts', 'browser')

export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(artifacts, {recursive: true})
  const path = join(artifacts, `${name}.png`)
  await page.screenshot({path, fullPage: true})
  return path
}

/**
 * Records, in the page itself, when it first showed each "last entry N" (the browser's wall
 * clock), so that a test measures how far the page trails the journal from the entries' own
 * times. Measured from the test instead (noticing the file, then asking the page over the
 * DevTools protocol), a loaded machine adds the test's own polling and round trips: a CI run
 * once measured 1.9 s for the first entry that way. Call before the page loads.
 */
export async function recordShownEntries(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const shown: Record<number, number> = {}
    ;(globalThis as unknown as {__shownEntries: Record<number, number>}).__shownEntries = shown
    const doc = (globalThis as unknown as {document: {textContent: string | null; body?: {textContent: string | null}}}).document
    const look = () => {
      const seq = /last entry (\d+)\./.exec(doc.body?.textContent ?? '')?.[1]
      if (seq !== undefined && !(Number(seq) in shown)) shown[Number(seq)] = Date.now()
    }
    new (globalThis as unknown as {MutationObserver: new (f: () => void) => {observe(n: unknown, o: object): void}}).MutationObserver(look).observe(doc, {
      childList: true,
      subtree: true,
      characterData: true,
    })
  })
}

/**
 * How long after its own time (`at`, written as it was appended) each entry was on the page: an
 * entry sent in one message with later ones counts as shown when the last of them was.
 */
export async function shownLags(page: Page, entries: Array<{seq: number; at: string}>): Promise<Array<{seq: number; lag: number}>> {
  const shown = Object.entries(await page.evaluate(() => (globalThis as unknown as {__shownEntries: Record<number, number>}).__shownEntries)).map(
    ([seq, when]) => ({
      seq: Number(seq),
      when,
    }),
  )
  return entries.map((e) => {
    const first = shown.filter((s) => s.seq >= e.seq).sort((a, b) => a.when - b.when)[0]
    return {seq: e.seq, lag: first ? first.when - Date.parse(e.at) : Number.POSITIVE_INFINITY}
  })
}
