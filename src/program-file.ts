/**
 * Where a program sluice starts in a process or thread of its own (the drill's fleet and load
 * generator, a sweep's worker) is, by its path under src/ ('drill/fleet-main.js'). Compiled, it
 * sits beside the module that starts it, at that path under dist/src/. Bundled (npm run build),
 * the code that starts it sits in a shared chunk of dist/bundle/ wherever the bundler put it, and
 * the program is an entry of its own at that path under dist/bundle/src/. Under the tests, from
 * TypeScript, neither exists; they name the compiled one.
 */
export function programFile(underSrc: string, from = import.meta.url): URL {
  const bundle = from.lastIndexOf('/dist/bundle/')
  if (bundle >= 0) return new URL(`${from.slice(0, bundle)}/dist/bundle/src/${underSrc}`)
  // This module sits directly under src/.
  return new URL(underSrc, from)
}
