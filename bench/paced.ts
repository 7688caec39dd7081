/**
 * Paced ramps against written schedules (issue 49): each case's runbook rehearsed as shipped, with
 * the fixed 1/5/25/50/100 schedule a progressive-delivery tool would use, with `tune`'s proposal,
 * and with `schedule: auto`, each over the same rehearsals (seeds × demand within ±10%). Prints one
 * JSON line a figure per case and variant, {"name", "value", "unit"}, like bench/figures.ts: time
 * to full traffic (median and 90th percentile over the rehearsals that got there), requests lost
 * from the runbook's start (median), relapses (rehearsals whose run did not complete with every
 * gate passed) and overreaches (a change that asked its receiving pool for more than it served
 * then: src/pacing/room.ts, as tune refuses), and auto's time against the fixed schedule's.
 *
 * `npm run bench:paced` (`-- --rehearsals N`, default 1,000; `--case NAME` for one).
 */
import {loadRunbookFile} from '../src/loader/load-runbook.js'
import type {Runbook} from '../src/loader/runbook.js'
import {parseRunbook} from '../src/loader/load-runbook.js'
import type {EngineIO} from '../src/ports/io.js'
import {paceSchema, type PaceRule} from '../src/pacing/rule.js'
import {rehearsalFigures} from '../src/report/rehearsal.js'
import {backendOf} from '../src/runbook/targets.js'
import {overreaches, stepLoads} from '../src/tune/overreach.js'
import {lastReturnIndex} from '../src/tune/ramps.js'
import {groundOf, variantScenario, type Ground} from '../src/tune/trial.js'
import {tuneRunbook} from '../src/tune/tune.js'
import {rehearse} from '../src/wiring/rehearsal.js'

interface Case {
  name: string
  file: string
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
]

const fixedSchedule = [1, 5, 25, 50, 100]

function emit(name: string, value: number | null, unit: string): void {
  process.stdout.write(`${JSON.stringify({name, value: value === null ? null : Number(value.toPrecision(4)), unit})}\n`)
}

/** The runbook with each ramp of more than one step on a new schedule: the fixed one from where the ramp before ended, or paced. */
function variant(runbook: Runbook, how: 'fixed' | 'auto' | 'probe', pace: Partial<PaceRule>): Runbook {
  const pools = backendOf(runbook.targets).weightedSets ?? {}
  let floor = 0
  const steps = runbook.steps.map((s) => {
    if (s.action !== 'ramp' || s.schedule.length <= 1) return s
    const end = s.schedule.at(-1)!
    const start = floor
    floor = end
    if (how === 'fixed') return {...s, schedule: [...fixedSchedule.filter((p) => p > start && p < end), end]}
    const pool = pools[s.set] ?? s.set
    const rule: PaceRule = {...paceSchema.parse({}), pool, perTarget: runbook.targets.capacityPerTarget?.[pool] ?? null, ...pace, to: end}
    // Without a capacity the same ramp probes.
    if (how === 'probe') rule.perTarget = null
    return {...s, schedule: [end], pace: rule}
  })
  return {...runbook, steps}
}

interface Outcome {
  relapse: boolean
  overreach: boolean
  secondsToFull: number | null
  lostPercent: number
}

async function rehearseOnce(runbook: Runbook, ground: Ground, seed: number, demandFactor: number): Promise<Outcome> {
  const last = lastReturnIndex(runbook)
  let fullAt: number | null = null
  let missed = false
  const io: EngineIO = {
    confirm: async () => true,
    notify(event) {
      if (event.type === 'verdict' && event.verdict.outcome !== 'pass') missed = true
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
    relapse: !completed || missed,
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
    const shipped = loadRunbookFile(c.file)
    const {ground} = await groundOf(shipped)
    const tuned = await tuneRunbook(shipped, {seeds: 5, demandMarginPercent: 10, slowMinority: true})
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
      emit(`${key}.overreaches`, outcomes.filter((o) => o.overreach).length, 'count')
      emit(`${key}.wall`, (performance.now() - started) / 1000, 's')
    }
    const auto = medianTimes.auto
    const fixed = medianTimes['fixed-1-5-25-50-100']
    if (auto != null && fixed != null) emit(`paced.${c.name}.auto-to-fixed.seconds-to-full-traffic`, auto / fixed, 'x')
  }
}

await main()
