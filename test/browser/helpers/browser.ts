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
