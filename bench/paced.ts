/**
 * Paced ramps against written schedules (issue 49): each case's runbook rehearsed as shipped, with
 * the fixed 1/5/25/50/100 schedule a progressive-delivery tool would use, with `tune`'s proposal,
 * and with `schedule: auto`, each over the same rehearsals (seeds × demand within ±10%). Prints one
 * JSON line a figure per case and variant, {"name", "value", "unit"}, like bench/figures.ts: time
 * to full traffic (median and 90th percentile over the rehearsals that got there), requests lost
 * from the runbook's start (median), relapses (rehearsals where a gate failed or the run ended on
 * anything but completed or held), holds (a paced step that waited for room or for its pool to
 * settle and held: not full traffic, but no relapse either; written schedules never hold), and
 * the old figure, rehearsals whose run did not complete with every
 * gate passed) and overreaches (a change that asked its receiving pool for more than it served
 * then: src/pacing/room.ts, as tune refuses), and auto's time against the fixed schedule's.
 *
 * `npm run bench:paced` (`-- --rehearsals N`, default 1,000; `--case NAME` for one).
 */
import {readFileSync} from 'node:fs'
import {loadRunbookFile} from '../src/loader/load-runbook.js'
import type {Runbook} from '../src/loader/runbook.js'
import {parseRunbook} from '../src/loader/load-runbook.js'
import type {EngineIO} from '../src/ports/io.js'
import {paceSchema, type PaceRule} from '../src/pacing/rule.js'
import {rehearsalFigures} from '../src/report/rehearsal.js'
import {backendOf} from '../src/runbook/targets.js'
import {overreaches, stepLoads} from '../src/tune/overreach.js'
import {groundOf, variantScenario, type Ground} from '../src/tune/trial.js'
import {tuneRunbook} from '../src/tune/tune.js'
import {rehearse} from '../src/wiring/rehearsal.js'

interface Case {
  name: string
  file: string
  /** The runbook's text as the case runs it, where it is not the file as shipped. */
  edit?: (text: string) => string
  /** The pace a paced variant's ramps take (the receiving pool and its capacity come from the runbook). */
  pace: Partial<PaceRule>
}

const cases: Case[] = [
  // The staged return's ramps, paced as runbooks/outlook-paced-return.yaml paces them (its
  // capacityPerTarget: 100 rps a mailbox server, which the written runbook does not need).
  {
    name: 'outlook-recovery',
    file: 'runbooks/outlook-staged-return.yaml',
    pace: {headroom: 10, handshakeCost: 4, clientInterval: 1, minStep: 2, perTarget: 100},
  },
  // A return onto a cold pool: drill-cold-return's run (everything to green, blue restarted with
  // none), then everything back to blue, whose six servers serve 40% until warm. "Shipped" is the
  // written way back's quarter rule as a schedule: a quarter of blue's 600 rps against 420.
  {
    name: 'cold-return',
    file: 'runbooks/drill-cold-return.yaml',
    edit: (text) =>
      `${text.replace('capacityPerTarget:\n    blue: 100\n', 'capacityPerTarget:\n    blue: 100\n    green: 100\n')}  - action: weighted-target-groups
    name: Everything back to blue
    pool: blue
    schedule: [35, 70, 100]
    bake: 30
    gate:
      metric: error-rate
      threshold: 2
      pool: blue
`,
    pace: {handshakeCost: 3},
  },
  // The lookups let back while they still hold threads (the pool holds about half of them):
  // a lift's `auto` probes, as no source counts what a restriction turns away.
  {name: 'lingering-thread-hold', file: 'runbooks/drill-lift-by-degrees.yaml', pace: {}},
]

const fixedSchedule = [1, 5, 25, 50, 100]

function emit(name: string, value: number | null, unit: string): void {
  process.stdout.write(`${JSON.stringify({name, value: value === null ? null : Number(value.toPrecision(4)), unit})}\n`)
}

/** The steps a variant reschedules: ramps, weighted target groups and lifts written in more than one step. */
type Returning = Extract<Runbook['steps'][number], {action: 'ramp' | 'weighted-target-groups' | 'lift'}>
const returning = (s: Runbook['steps'][number]): s is Returning =>
  (s.action === 'ramp' || s.action === 'weighted-target-groups' || s.action === 'lift') && s.schedule !== undefined && s.schedule.length > 1

/**
 * The runbook with each ramp or lift of more than one step on a new schedule: the fixed one from
 * where the one before ended, or paced. A lift always probes (its type's demand cannot be read).
 */
function variant(runbook: Runbook, how: 'fixed' | 'auto' | 'probe', pace: Partial<PaceRule>): Runbook {
  const pools = backendOf(runbook.targets).weightedSets ?? {}
  const floors = new Map<string, number>()
  const steps = runbook.steps.map((s) => {
    if (!returning(s)) return s
    const end = s.schedule!.at(-1)!
    const key = s.action === 'lift' ? `lift ${s.type}` : 'weights'
    const start = floors.get(key) ?? 0
    floors.set(key, end)
    if (how === 'fixed') return {...s, schedule: [...fixedSchedule.filter((p) => p > start && p < end), end]}
    const pool = s.action === 'ramp' ? (pools[s.set] ?? s.set) : s.action === 'weighted-target-groups' ? s.pool : s.gate!.pool!
    const rule: PaceRule = {...paceSchema.parse({}), pool, perTarget: runbook.targets.capacityPerTarget?.[pool] ?? null, ...pace, to: end}
    // Without a capacity the same ramp probes.
    if (how === 'probe' || s.action === 'lift') rule.perTarget = null
    return {...s, schedule: [end], pace: rule}
  })
  return {...runbook, steps}
}

/** The step that brings the last of the traffic back: the last ramp, weighted target groups or lift. */
const lastReturn = (runbook: Runbook): number | null =>
  runbook.steps.filter((s) => s.action === 'ramp' || s.action === 'lift' || s.action === 'weighted-target-groups').at(-1)?.index ?? null

interface Outcome {
  relapse: boolean
  held: boolean
  /** The run did not complete with every verdict a pass. */
  incomplete: boolean
  overreach: boolean
  secondsToFull: number | null
  lostPercent: number
}

async function rehearseOnce(runbook: Runbook, ground: Ground, seed: number, demandFactor: number): Promise<Outcome> {
  const last = lastReturn(runbook)
  let fullAt: number | null = null
  let missed = false
  let failed = false
  const io: EngineIO = {
    confirm: async () => true,
    notify(event) {
      if (event.type === 'verdict' && event.verdict.outcome !== 'pass') missed = true
      if (event.type === 'verdict' && event.verdict.outcome === 'fail') failed = true
      if (event.type === 'mutation' && event.mutation.phase === 'outcome' && event.mutation.ok && event.mutation.step === last) fullAt = event.at
    },
  }
  const {run, rehearsal} = await rehearse(
    runbook,
    {io, signal: new AbortController().signal, operator: 'bench', approved: runbook.steps.filter((s) => s.action === 'approve').map((s) => s.index)},
    {pace: null, scenario: variantScenario(ground.scenario, {seed, demandFactor, slowMinority: null}), setup: ground.setup, startAt: ground.startAt, seeds: 1},
  )
  const loads = stepLoads(rehearsal.weights, backendOf(runbook.targets).weightedSets ?? {}, rehearsal.scenario)
  const completed = run.outcome === 'completed'
  const at = fullAt as number | null
  return {
    relapse: failed || (run.outcome !== 'completed' && run.outcome !== 'held'),
    held: run.outcome === 'held',
    incomplete: !completed || missed,
    overreach: loads.some(overreaches),
    secondsToFull: completed && at !== null ? at - rehearsal.startAt : null,
    lostPercent: rehearsalFigures(rehearsal).fromStart.lostPercent,
  }
}

const quantile = (xs: number[], q: number): number | null => {
  if (xs.length === 0) return null
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]
}

async function main(): Promise<void> {
  const args = process.argv.slice(2)
  const count = Number(args[args.indexOf('--rehearsals') + 1] ?? 0) || 1000
  const only = args.includes('--case') ? args[args.indexOf('--case') + 1] : null
  for (const c of cases.filter((k) => only === null || k.name === only)) {
    const shipped = c.edit ? parseRunbook(c.file, c.edit(readFileSync(c.file, 'utf8'))) : loadRunbookFile(c.file)
    const {ground} = await groundOf(shipped)
    // tune reshapes ramps and lifts; a runbook whose returns are weighted target groups it refuses, by name.
    const tuned = await tuneRunbook(shipped, {seeds: 5, demandMarginPercent: 10, slowMinority: true}).catch((error: Error) => {
      process.stderr.write(`${c.name}: tune: ${error.message}\n`)
      return {text: null}
    })
    const variants: Array<[string, Runbook | null]> = [
      ['shipped', shipped],
      ['fixed-1-5-25-50-100', variant(shipped, 'fixed', c.pace)],
      ['tune', tuned.text === null ? null : parseRunbook(c.file, tuned.text)],
      ['auto', variant(shipped, 'auto', c.pace)],
      ['auto-probing', variant(shipped, 'probe', c.pace)],
    ]
    // Ten demand levels from 90% to 110%, each on count / 10 seeds.
    const runs = Array.from({length: count}, (_, k) => ({seed: 1 + Math.floor(k / 10), demandFactor: 0.9 + ((k % 10) / 9) * 0.2}))
    const medianTimes: Record<string, number | null> = {}
    for (const [name, runbook] of variants) {
      const key = `paced.${c.name}.${name}`
      if (runbook === null) {
        emit(`${key}.no-proposal`, 1, 'flag')
        continue
      }
      const outcomes: Outcome[] = []
      const started = performance.now()
      for (const r of runs) outcomes.push(await rehearseOnce(runbook, ground, r.seed, r.demandFactor))
      const times = outcomes.flatMap((o) => (o.secondsToFull === null ? [] : [o.secondsToFull]))
      medianTimes[name] = quantile(times, 0.5)
      emit(`${key}.rehearsals`, outcomes.length, 'count')
      emit(`${key}.seconds-to-full-traffic.median`, quantile(times, 0.5), 's')
      emit(`${key}.seconds-to-full-traffic.p90`, quantile(times, 0.9), 's')
      emit(
        `${key}.lost-percent.median`,
        quantile(
          outcomes.map((o) => o.lostPercent),
          0.5,
        ),
        '%',
      )
      emit(`${key}.relapses`, outcomes.filter((o) => o.relapse).length, 'count')
      emit(`${key}.holds`, outcomes.filter((o) => o.held).length, 'count')
      emit(`${key}.not-complete-and-clean`, outcomes.filter((o) => o.incomplete).length, 'count')
      emit(`${key}.overreaches`, outcomes.filter((o) => o.overreach).length, 'count')
      emit(`${key}.wall`, (performance.now() - started) / 1000, 's')
    }
    const auto = medianTimes.auto
    const fixed = medianTimes['fixed-1-5-25-50-100']
    if (auto != null && fixed != null) emit(`paced.${c.name}.auto-to-fixed.seconds-to-full-traffic`, auto / fixed, 'x')
  }
}

await main()
