import {startFleet, type FleetConfig} from './fleet.js'
import {endOnSignalsOrStdin, fail as failProgram, readConfig} from './program.js'

/**
 * The loopback fleet as a program of its own, so a drill runs it beside HAProxy and the load
 * generator on another core:
 *
 *   node dist/src/drill/fleet-main.js --config fleet.json [--exit-on-stdin-end]
 *
 * The config is a FleetConfig (src/drill/fleet.ts) as JSON. Once every server listens it prints
 * one JSON line, {"admin": port, "pools": [{"name", "ports"}]}, on stdout. It stops every
 * listener and exits on SIGINT or SIGTERM, and with --exit-on-stdin-end also when its stdin
 * closes, which is how it follows a parent that died without a word (kill -9 included).
 * Bad arguments or a bad config exit 2 with one line on stderr.
 */

const fail = (message: string): never => failProgram('fleet', message)
const {config, file} = readConfig<FleetConfig>('fleet', 'a fleet config')
if (!Array.isArray(config.pools) || config.pools.length === 0) fail(`--config ${file}: expected "pools", a non-empty list`)

const fleet = await startFleet(config).catch((error: Error) => fail(`could not start: ${error.message}`))
let exiting = false
const exit = (code: number) => {
  if (exiting) return
  exiting = true
  void fleet.stop().then(() => process.exit(code))
}
endOnSignalsOrStdin(() => exit(0))
process.stdout.write(`${JSON.stringify({admin: fleet.admin, pools: fleet.pools})}\n`)
