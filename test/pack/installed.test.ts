import {existsSync, mkdtempSync, rmSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {fileURLToPath} from 'node:url'
import {afterAll, beforeAll, describe, expect, it} from 'vitest'
import {isolatedEnv, spawnCollected} from '../helpers/cli.js'

// The published package as a user gets it: `npm pack` of the built repository, installed from the
// tarball into an empty folder, run from there. What the repository's own tests cannot see: a file
// the bundle needs that `files` leaves out, a dependency the bundle expects in node_modules that
// package.json does not name, a program (the sweep's worker) looked for where it is not installed.

const repo = fileURLToPath(new URL('../..', import.meta.url))
const folder = mkdtempSync(join(tmpdir(), 'sluice-pack-'))
const installed = join(folder, 'node_modules', '.bin', 'sluice')

interface PackedFile {
  path: string
  size: number
}
let packed: {filename: string; size: number; unpackedSize: number; entryCount: number; files: PackedFile[]}

const env = {...isolatedEnv('pack'), NO_COLOR: '1'}
const installedSluice = (args: string[]) => spawnCollected(installed, args, {cwd: folder, env, timeoutMs: 60_000})

beforeAll(async () => {
  // The package as built by `npm run build` (the pretest of npm run test:e2e): --ignore-scripts, or `prepare` would build it again.
  expect(existsSync(join(repo, 'dist', 'bundle', 'src', 'cli', 'oclif.js')), 'run npm run build first').toBe(true)
  const pack = await spawnCollected('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', folder], {cwd: repo, timeoutMs: 60_000})
  expect(pack.code, pack.stderr).toBe(0)
  packed = JSON.parse(pack.stdout)[0]
  // A folder of its own, so npm installs here and not into a package.json above it.
  writeFileSync(join(folder, 'package.json'), JSON.stringify({name: 'sluice-pack-test', private: true}))
  // CI has run `npm ci` first, so npm's cache holds every dependency: no network needed, and none waited for.
  const install = await spawnCollected('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', join(folder, packed.filename)], {
    cwd: folder,
    timeoutMs: 120_000,
  })
  expect(install.code, install.stderr).toBe(0)
}, 200_000)

// Some 50 MB of node_modules: not left in the temporary directory run after run.
afterAll(() => rmSync(folder, {recursive: true, force: true}))

describe('the npm pack tarball', () => {
  it('ships the bundle, its programs, the manifest, the runbooks and scenarios, and nothing for building or testing', () => {
    const paths = packed.files.map((f) => f.path)
    for (const needed of [
      'bin/run.js',
      'dist/bundle/src/cli/oclif.js',
      'dist/bundle/src/cli/help.js',
      'dist/bundle/src/sweep/sweep-worker.js',
      'dist/bundle/src/drill/fleet-main.js',
      'dist/bundle/commands/simulate.js',
      'oclif.manifest.json',
      'runbook.schema.json',
      'runbooks/outlook-staged-return.yaml',
      'scenarios/outlook-2026.yaml',
      'assets/serve/index.html',
      'assets/serve/app.js',
      'assets/serve/app.css',
      'assets/look.css',
      'LICENSE',
    ])
      expect(paths).toContain(needed)
    // The compiled modules the bundle was made from, the benches and the dev launcher are not run by an installed sluice.
    expect(paths.filter((p) => /^(src|test|bench|scripts|node_modules)\/|^dist\/(src|commands|bench)\/|^bin\/dev\.js$|\.ts$/.test(p))).toEqual([])
    expect(packed.size).toBeLessThan(1_500_000)
    expect(packed.entryCount).toBeLessThan(250)
  })
})

describe.concurrent('sluice installed from the npm pack tarball', () => {
  it('--help lists the commands', async () => {
    const {code, stdout, stderr} = await installedSluice(['--help'])
    expect(code, stderr).toBe(0)
    expect(stdout).toMatch(/^VERSION\n {2}sluice\/\d+\.\d+\.\d+ /m)
    for (const command of ['run', 'simulate', 'journal', 'runbooks', 'drill']) expect(stdout).toMatch(new RegExp(`^ {2}${command} +\\S`, 'm'))
  })

  it('serves its page from the installed package (sluice serve)', async () => {
    const {spawn} = await import('node:child_process')
    const {createInterface} = await import('node:readline')
    const child = spawn(installed, ['serve', '--port', '0', '--json'], {cwd: folder, env, stdio: ['ignore', 'pipe', 'pipe']})
    try {
      const line = await new Promise<string>((resolve) => createInterface({input: child.stdout}).once('line', resolve))
      const {url} = JSON.parse(line) as {url: string}
      for (const asset of ['', 'app.js', 'app.css', 'look.css', 'look.json']) expect((await fetch(`${url}${asset}`)).status, asset).toBe(200)
    } finally {
      child.kill('SIGTERM')
    }
  })

  it('rehearses a shipped runbook by its name', async () => {
    const {code, stdout, stderr} = await installedSluice(['run', 'outlook-staged-return', '--dry-run'])
    expect(code, stderr).toBe(0)
    expect(stdout).toMatch(/^Rehearsal of outlook-staged-return against outlook-recovery /m)
    expect(stdout).toMatch(/^Outcome: completed — outlook-staged-return: all 10 steps done$/m)
    expect(stderr).toMatch(/^\[\+\d\d:\d\d\] run: completed outlook-staged-return/m)
  })

  it('sweeps on 2 worker threads, the worker program found in the installed bundle', async () => {
    const {code, stdout, stderr} = await installedSluice([
      'simulate',
      '--scenario',
      'outlook-2026',
      '--sweep',
      'broken=0..20:5',
      '--sweep',
      'demand=500..2000:3',
      '--workers',
      '2',
    ])
    expect(code, stderr).toBe(0)
    expect(stdout).toMatch(/^outlook-2026: sweep of broken × demand, 60 runs \(4 setups\)$/m)
    expect(stdout.match(/\b\d+ stuck, \d+ recovered, \d+ unharmed of 15\b/g)).toHaveLength(4)
    expect(stderr).toMatch(/^sweep grid: 80 of 80 cells done, 0 left$/m)
  })
})
