import {readFileSync} from 'node:fs'
import {spawnFleet} from './process.js'
import {startLoad} from './load-generator.js'

/**
 * Measures what the drill's own machinery sustains on this machine: the load generator (this
 * process) against the fleet (a child process, on the other core), at rising open-loop rates,
 * with servers that have capacity to spare, so every shortfall is the machinery's. It prints one
 * JSON line per rate, {name, value, unit} as the bench does, for choosing a drill's rate scale:
 *
 *   node dist/src/drill/ceiling-main.js [seconds per rate] [rate...]
 *
 * A rate is sustained while the generator sends what the curve asks, nearly all of it is served,
 * p99 latency stays near the service time and the event loop's delay stays small. Past its
 * ceiling the generator fails as the servers would: late timers, timeouts, sockets destroyed and
 * reopened, more work; so the ceiling falls when other processes take the cores.
 */

const args = process.argv.slice(2).map(Number)
const seconds = args[0] > 0 ? args[0] : 5
const rates = args.length > 1 ? args.slice(1) : [1000, 2000, 3000, 4000, 6000]
/** CPU seconds a process has used, from /proc on Linux; NaN elsewhere. */
function cpuSecondsOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ')
    return (Number(fields[11]) + Number(fields[12])) / 100
  } catch {
    return NaN
  }
}

const servers = 20
const serviceTime = 0.01

const fleet = await spawnFleet({
  pools: [
    {
      name: 'web',
      servers,
      capacity: 2000,
      serviceTime,
      threads: 1000,
      queueLimit: 10_000,
      coldFactor: 1,
      warmupSeconds: 0,
      restartSeconds: 1,
      handshakeCost: 1,
    },
  ],
})
const stop = () => void fleet.stop().then(() => process.exit(130))
process.on('SIGINT', stop)
process.on('SIGTERM', stop)
try {
  for (const rps of rates) {
    // One generator per server port, as HAProxy would spread it; all in this process.
    const loads = fleet.pools[0].ports.map((port, i) =>
      startLoad({
        target: {host: '127.0.0.1', port},
        curve: [[0, rps / servers]],
        types: [{name: 'all', share: 1}],
        clients: {attempts: 1, timeout: 2, backoffBase: 0, backoffMax: 0, retryBudget: null, budgetWindow: 10, honourRetryAfter: false},
        duration: seconds,
        bucketSeconds: 1,
        arrivals: 'poisson',
        seed: i + 1,
      }),
    )
    const cpuBefore = process.cpuUsage()
    const fleetBefore = cpuSecondsOf(fleet.pid)
    const records = await Promise.all(loads.map((l) => l.done))
    const cpu = process.cpuUsage(cpuBefore)
    const fleetCpu = cpuSecondsOf(fleet.pid) - fleetBefore
    const total = (key: 'demand' | 'served' | 'failed') => records.reduce((sum, r) => sum + r.series[key].reduce((a, b) => a + b, 0) * r.bucketSeconds, 0)
    const wall = Math.max(...records.map((r) => r.wallSeconds))
    const p99 = Math.max(...records.flatMap((r) => r.latencyP99.filter((x) => !Number.isNaN(x))))
    const lines = [
      {name: `drill.load.${rps}.sent`, value: Math.round(total('demand') / seconds), unit: 'req/s'},
      {name: `drill.load.${rps}.served`, value: Math.round(total('served') / seconds), unit: 'req/s'},
      {name: `drill.load.${rps}.failed`, value: Math.round(total('failed')), unit: 'req'},
      {name: `drill.load.${rps}.p99`, value: Math.round(p99), unit: 'ms'},
      {name: `drill.load.${rps}.loopDelayP99`, value: Math.round(Math.max(...records.map((r) => r.loopDelay.p99))), unit: 'ms'},
      {name: `drill.load.${rps}.cpu`, value: Number(((cpu.user + cpu.system) / 1e6 / wall).toFixed(2)), unit: 'cores'},
      {name: `drill.fleet.${rps}.cpu`, value: Number((fleetCpu / wall).toFixed(2)), unit: 'cores'},
    ]
    for (const line of lines) process.stdout.write(`${JSON.stringify(line)}\n`)
  }
} finally {
  await fleet.stop()
}
