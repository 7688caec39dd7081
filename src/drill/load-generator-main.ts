import {startLoad, type LoadConfig} from './load-generator.js'
import {endOnSignalsOrStdin, fail as failProgram, readConfig} from './program.js'

/**
 * The load generator as a program of its own, so its arrivals and timeouts keep time on a core
 * the drill's engine does not share:
 *
 *   node dist/src/drill/load-generator-main.js --config load.json [--exit-on-stdin-end]
 *
 * The config is a LoadConfig (src/drill/load-generator.ts) as JSON. It prints {"started": true} when the
 * first arrivals are due, then, when the run has ended and its attempts settled, the LoadRecord as
 * one JSON line, and exits 0. SIGINT or SIGTERM end the run early the same way (the record so
 * far, then exit); with --exit-on-stdin-end so does its stdin closing. Bad arguments or a bad
 * config exit 2 with one line on stderr.
 */

const fail = (message: string): never => failProgram('load', message)
const {config, file} = readConfig<LoadConfig>('load', 'a load config')
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
endOnSignalsOrStdin(end)
