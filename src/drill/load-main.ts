import {readFileSync} from 'node:fs'
import {startLoad, type LoadConfig} from './load.js'

/**
 * The load generator as a program of its own, so its arrivals and timeouts keep time on a core
 * the drill's engine does not share:
 *
 *   node dist/src/drill/load-main.js --config load.json [--exit-on-stdin-end]
 *
 * The config is a LoadConfig (src/drill/load.ts) as JSON. It prints {"started": true} when the
 * first arrivals are due, then, when the run has ended and its attempts settled, the LoadRecord as
 * one JSON line, and exits 0. SIGINT or SIGTERM end the run early the same way (the record so
 * far, then exit); with --exit-on-stdin-end so does its stdin closing. Bad arguments or a bad
 * config exit 2 with one line on stderr.
 */

function fail(message: string): never {
  process.stderr.write(`load: ${message}\n`)
  process.exit(2)
}

const args = process.argv.slice(2)
const configAt = args.indexOf('--config')
if (configAt < 0 || args[configAt + 1] === undefined) fail('expected --config FILE (a load config as JSON)')
const file = args[configAt + 1]
let config: LoadConfig
try {
  config = JSON.parse(readFileSync(file, 'utf8')) as LoadConfig
} catch (error) {
  fail(`--config ${file}: ${(error as Error).message}`)
}
if (!Array.isArray(config.curve) || config.curve.length === 0) fail(`--config ${file}: expected "curve", a non-empty list of [seconds, rps]`)
if (!(config.duration > 0) || !(config.bucketSeconds > 0)) fail(`--config ${file}: expected "duration" and "bucketSeconds" above 0`)

const load = startLoad(config)
let printed = false
const finish = (record: unknown) => {
  if (printed) return
  printed = true
  process.stdout.write(`${JSON.stringify(record)}\n`, () => process.exit(0))
}
process.stdout.write(`${JSON.stringify({started: true})}\n`)
void load.done.then(finish)
const end = () => void load.stop().then(finish)
process.on('SIGINT', end)
process.on('SIGTERM', end)
if (args.includes('--exit-on-stdin-end')) {
  process.stdin.on('end', end)
  process.stdin.on('error', end)
  process.stdin.resume()
}
