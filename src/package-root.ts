import {existsSync} from 'node:fs'
import {dirname, join} from 'node:path'
import {fileURLToPath} from 'node:url'

/**
 * The folder holding sluice's package.json. Found by walking up from this module because the same
 * code runs compiled from dist/ and as TypeScript under the tests, at different depths.
 */
function findPackageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url))
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir)
    if (parent === dir) throw new Error('sluice: cannot find its package.json above ' + fileURLToPath(import.meta.url))
    dir = parent
  }
  return dir
}

export const packageRoot = findPackageRoot()
