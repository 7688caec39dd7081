/**
 * `npm run closed-loop`: the calibration closed against real software. A drill runs the loop's
 * fleet behind a real HAProxy (bench/closed-loop/calibration-run.yaml) while `sluice calibrate`
 * reads only that HAProxy, through the admin socket the drill opens for it (drill --socket):
 * never the drill's scenario file. Then each pair's drill runs the same fleet with another fault
 * and demand, predicted from the calibrated scenario alone (drill --model), and its report card
 * says whether the real run and the prediction agree. Prints the calibration against the truth
 * the experiment knows, one table row per pair, and a JSON line per pair for the record.
 *
 * Each drill is about three minutes of this machine's two cores; the whole loop about fifteen.
 * It is an experiment, not a test: a pair the machine starved reports inconclusive.
 *
 *   npm run closed-loop [-- --pairs headroom,overload] [-- --control]
 *
 * --control also drills each pair predicted from its own scenario, the simulator's own agreement
 * with the fleet, so a disagreement can be told apart: the calibration's or the model's.
 */
import {spawn} from 'node:child_process'
import {existsSync, mkdtempSync, readFileSync, readdirSync, rmSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {parse} from 'yaml'
import type {ReportCard} from '../src/drill/report-card.js'
import {packageRoot} from '../src/package-root.js'

const root = packageRoot
const bin = join(root, 'bin', 'run.js')
const dir = join(root, 'bench', 'closed-loop')
const calibrationRun = 'calibration-run.yaml'

interface Spawned {
  code: number | null
  stdout: string
  stderr: string
}

function sluice(args: string[]): {done: Promise<Spawned>} {
  const child = spawn(process.execPath, [bin, ...args], {stdio: ['ignore', 'pipe', 'pipe'], env: {...process.env, NO_COLOR: '1'}})
  let stdout = ''
  let stderr = ''
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()))
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()))
  return {done: new Promise((resolve) => child.on('close', (code) => resolve({code, stdout, stderr})))}
}

function json<T>(what: string, run: Spawned): T {
  try {
    return JSON.parse(run.stdout) as T
  } catch {
    throw new Error(`${what} exited ${run.code} without JSON:\n${run.stderr.slice(-2000)}`)
  }
}

async function untilExists(path: string, seconds: number): Promise<void> {
  for (let waited = 0; waited < seconds * 10; waited++) {
    if (existsSync(path)) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`the drill's HAProxy socket ${path} did not appear within ${seconds} s`)
}

interface DrillOut {
  agree: boolean | null
  verdict: {kind: string; reason?: string; outcomes?: string[]; figures?: string[]}
  real: {card: ReportCard}
  predicted: {card: ReportCard}
  spread: {chance: {cascaded: number; recovered: number}} | null
  load: {eventLoopDelayP99Ms: number; fleetLoopDelayP99Ms: number | null}
}

const scale = ['--rate-scale', '1', '--time-scale', '1']

async function calibrate(work: string): Promise<{model: string; capacity: {value: number; low?: number; high?: number; method: string}; truth: number}> {
  const socket = join(work, 'haproxy.sock')
  const model = join(work, 'calibrated.yaml')
  const scenarioFile = join(dir, calibrationRun)
  const truth = parse(readFileSync(scenarioFile, 'utf8')) as {duration: number; pools: Array<{capacity: number}>}
  process.stderr.write(`calibration run: drilling ${calibrationRun}, calibrate reading its HAProxy at ${socket}\n`)
  const drill = sluice(['drill', scenarioFile, ...scale, '--seeds', '0', '--socket', socket, '--json'])
  await untilExists(socket, 120)
  // The window outlasts the drill: calibrate stops when the drill stops its HAProxy, and says so.
  const cal = sluice(['calibrate', '--haproxy', socket, '--backend', 'web', '--window', String(truth.duration + 60), '--period', '2', '--out', model, '--json'])
  const [drilled, calibrated] = await Promise.all([drill.done, cal.done])
  json<DrillOut>('the calibration drill', drilled)
  const c = json<{figures: {capacity: {value: number; low?: number; high?: number; method: string}}; assumed: string[]}>('calibrate', calibrated)
  for (const a of c.assumed) process.stderr.write(`  assumed: ${a}\n`)
  return {model, capacity: c.figures.capacity, truth: truth.pools[0].capacity}
}

const fmt = (v: number | null, unit = ''): string => (v === null ? '—' : `${Math.round(v * 10) / 10}${unit}`)

function row(pair: string, from: string, d: DrillOut): string[] {
  const r = d.real.card
  const p = d.predicted.card
  const verdict = d.verdict.kind === 'disagree' ? `disagree (${[...(d.verdict.outcomes ?? []), ...(d.verdict.figures ?? [])].join(', ')})` : d.verdict.kind
  return [
    pair,
    from,
    `${r.cascaded ? 'yes' : 'no'} / ${p.cascaded ? 'yes' : 'no'}`,
    `${r.recovered ? 'yes' : 'no'} / ${p.recovered ? 'yes' : 'no'}`,
    `${fmt(r.servedDuringFault)} / ${fmt(p.servedDuringFault)}`,
    `${fmt(r.lostPercent, '%')} / ${fmt(p.lostPercent, '%')}`,
    `${fmt(r.secondsToFullServiceAfterFix, ' s')} / ${fmt(p.secondsToFullServiceAfterFix, ' s')}`,
    `${fmt(r.fewestInRotation)} / ${fmt(p.fewestInRotation)}`,
    verdict + (d.verdict.reason ? `: ${d.verdict.reason}` : ''),
  ]
}

async function main(): Promise<void> {
  const args = process.argv.slice(2)
  const pairsAt = args.indexOf('--pairs')
  const all = readdirSync(dir)
    .filter((f) => f.endsWith('.yaml') && f !== calibrationRun)
    .map((f) => f.replace(/\.yaml$/, ''))
  const pairs = pairsAt >= 0 ? args[pairsAt + 1].split(',') : all
  const control = args.includes('--control')
  const work = mkdtempSync(join(tmpdir(), 'sluice-loop-'))
  try {
    const {model, capacity, truth} = await calibrate(work)
    const off = (capacity.value - truth) / truth
    process.stdout.write(
      `capacity: calibrated ${fmt(capacity.value)} rps per server (${capacity.method}, 90% ${fmt(capacity.low ?? null)}–${fmt(capacity.high ?? null)}), true ${truth}: ${off >= 0 ? '+' : ''}${Math.round(off * 1000) / 10}% (bar: within 15%)\n`,
    )
    process.stdout.write(`${JSON.stringify({name: 'closed-loop.capacity', calibrated: capacity.value, truth, off})}\n`)
    process.stdout.write(`\n--- calibrated scenario (${model}) ---\n${readFileSync(model, 'utf8')}---\n\n`)
    const header = [
      'pair',
      'predicted from',
      'cascaded real/pred',
      'recovered',
      'served during fault',
      'lost',
      'full service after fix',
      'fewest in rotation',
      'verdict',
    ]
    const rows: string[][] = []
    for (const pair of pairs) {
      const file = join(dir, `${pair}.yaml`)
      const sides: Array<[string, string[]]> = [['calibrated', ['--model', model]], ...(control ? [['own scenario', []] as [string, string[]]] : [])]
      for (const [from, extra] of sides) {
        process.stderr.write(`pair ${pair}: drilling, predicted from the ${from}\n`)
        const d = json<DrillOut>(`drill ${pair}`, await sluice(['drill', file, ...scale, ...extra, '--json']).done)
        rows.push(row(pair, from, d))
        process.stdout.write(
          `${JSON.stringify({name: `closed-loop.${pair}`, from, verdict: d.verdict, real: d.real.card, predicted: d.predicted.card, chance: d.spread?.chance ?? null, load: d.load})}\n`,
        )
      }
    }
    const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)))
    process.stdout.write(`\n${[header, ...rows].map((r) => r.map((c, i) => c.padEnd(widths[i])).join('  ')).join('\n')}\n`)
  } finally {
    rmSync(work, {recursive: true, force: true})
  }
}

await main()
