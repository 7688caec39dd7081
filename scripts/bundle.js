/**
 * `npm run build`'s second step: bundles the compiled CLI (dist/commands, dist/src) with its
 * dependencies into dist/bundle, which bin/run.js and the oclif manifest use. A command then
 * loads a handful of files instead of some four hundred modules: start-up is mostly module
 * resolution and loading (a profile of a spawned `journal`: the CJS and ESM loaders, oclif, zod,
 * yaml), and the bundle measured 0.62× the CPU of the unbundled `journal` and 0.70× of `--help`.
 *
 * Left out of the bundle and loaded from node_modules as before: the AWS SDK (loaded only by a
 * live run, on first use), @inquirer (only to ask), oclif's plugins (help and autocomplete,
 * which bring their own oclif), and TypeScript and ts-node, which oclif loads only to run
 * commands from TypeScript source (bin/dev.js runs the compiled ones).
 */
import {build} from 'esbuild'
import {readFile, readdir, rm} from 'node:fs/promises'
import {dirname, join, relative, resolve} from 'node:path'

/** Every entry: the commands, oclif's help class and hooks, oclif itself, and the programs sluice starts as processes or threads (src/program-file.ts). */
async function entryPoints() {
  const commands = (await readdir('dist/commands', {recursive: true})).filter((f) => f.endsWith('.js')).map((f) => join('dist/commands', f))
  const programs = ['drill/fleet-main.js', 'drill/load-generator-main.js', 'drill/ceiling-main.js', 'sweep/sweep-worker.js', 'serve/prediction-worker.js']
  return [
    ...commands,
    'dist/src/cli/oclif.js',
    'dist/src/cli/help.js',
    'dist/src/cli/not-found.js',
    'dist/src/cli/autocomplete-hook.js',
    ...programs.map((p) => join('dist/src', p)),
  ]
}

/**
 * oclif's CommonJS modules read __dirname and __filename (it reads its own package.json beside
 * them); bundled as ES modules they have neither, so each gets the path it has in node_modules,
 * found when it runs (wherever the package is installed) from where @oclif/core resolves. Only
 * oclif's: other packages (ejs) write the words into code they generate.
 */
const oclifRoot = join('node_modules', '@oclif', 'core')
const commonJsPaths = {
  name: 'commonjs-paths',
  setup(build) {
    build.onLoad({filter: /node_modules[\\/]@oclif[\\/]core[\\/].*\.js$/}, async (args) => {
      const source = await readFile(args.path, 'utf8')
      if (!/\b__(dirname|filename)\b/.test(source)) return undefined
      const inPackage = relative(resolve(oclifRoot), args.path)
      const at = (path) => `require('node:path').join(require('node:path').dirname(require.resolve('@oclif/core/package.json')), ${JSON.stringify(path)})`
      return {
        contents: source.replace(/\b__dirname\b/g, at(dirname(inPackage))).replace(/\b__filename\b/g, at(inPackage)),
        loader: 'js',
      }
    })
  },
}

// Chunks are named by their hash, so a rebuild leaves the old ones behind; npm pack would ship them.
await rm('dist/bundle', {recursive: true, force: true})

await build({
  entryPoints: await entryPoints(),
  outdir: 'dist/bundle',
  outbase: 'dist',
  chunkNames: 'chunks/[name]-[hash]',
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  external: ['@aws-sdk/*', '@inquirer/*', '@oclif/plugin-*', 'typescript', 'ts-node'],
  // CommonJS dependencies require Node's own modules; an ES module has no require of its own.
  banner: {js: "import {createRequire as __sluiceRequire} from 'node:module'; const require = __sluiceRequire(import.meta.url);"},
  plugins: [commonJsPaths],
  logLevel: 'warning',
})
