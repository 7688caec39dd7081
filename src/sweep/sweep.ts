import type {Policy} from '../sim/config.js'
import type {Scenario} from '../sim/scenario/schema.js'
import {outcomes, type CellOutcome, type CellQuery, type CellResult} from './classify.js'
import type {Axis} from './grid.js'
import {formatNumber, healthyCapacity} from './params.js'
import {
  converged,
  gridBrackets,
  maxBisectionRounds,
  midpoint,
  narrow,
  stalled,
  tippingFigures,
  tippingSentence,
  transitionOf,
  type Bracket,
  type LineEdges,
} from './tipping.js'
import type {CellRunner} from './workers.js'

export interface SetupSweep {
  name: string
  policy: Policy
  /** Row by row from the lowest y, each row from the lowest x: cells[yi * xs + xi]. */
  cells: CellResult[]
  /** The stuck edges along x, one line per grid row (one line without a y axis). */
  edges: LineEdges[]
  /** The line the sentence is about: at the scenario's own y when the y axis has one. */
  tipping: LineEdges
  sentence: string
}

export interface SweepResult {
  scenario: Scenario
  axes: Axis[]
  setups: SetupSweep[]
}

export type SweepPhase = 'grid' | 'tipping points'
export type SweepProgress = (phase: SweepPhase, done: number, total: number) => void

/**
 * The y at which tipping points are stated: the scenario's own value when the axis reaches it
 * (an extra row is run when it falls between grid rows), else the grid row nearest it, else the
 * middle row. Null without a y axis.
 */
export function tippingRow(y: Axis | undefined, scenario: Scenario): number | null {
  if (!y) return null
  const base = y.param.base(scenario)
  if (base !== undefined && base >= y.from && base <= y.to) return base
  const target = base ?? y.values[Math.floor(y.values.length / 2)]
  return y.values.reduce((best, v) => (Math.abs(v - target) < Math.abs(best - target) ? v : best))
}

/**
 * Runs every setup over the grid, then narrows each change between stuck and not stuck along x by
 * bisection, all setups and rows in one batch per round, so both threads stay busy.
 */
export async function runSweep(
  scenario: Scenario,
  setups: Array<{name: string; policy: Policy}>,
  axes: Axis[],
  runner: CellRunner,
  progress?: SweepProgress,
): Promise<SweepResult> {
  const [x, y] = axes
  const xs = x.values
  const gridYs: Array<number | null> = y ? y.values : [null]
  const tipY = tippingRow(y, scenario)
  const lineYs = tipY !== null && !gridYs.includes(tipY) ? [...gridYs, tipY] : gridYs

  // Every line of every setup, grid rows first: setup-major so each setup's cells are contiguous.
  const queries: CellQuery[] = []
  for (let s = 0; s < setups.length; s++) for (const ly of lineYs) for (const xv of xs) queries.push({setup: s, x: xv, y: ly ?? NaN})
  const total = queries.length
  const results = await runner.run(queries, (done) => progress?.('grid', done, total))
  const lineAt = (s: number, li: number): CellResult[] => results.slice((s * lineYs.length + li) * xs.length, (s * lineYs.length + li + 1) * xs.length)

  // Bisection: each open bracket asks for its midpoint; a round runs every open bracket's midpoint at once.
  type Open = {setup: number; line: number; bracket: Bracket}
  const brackets: Open[] = []
  setups.forEach((_, s) =>
    lineYs.forEach((_, li) => {
      const stuck = lineAt(s, li).map((r) => r.outcome === 'stuck')
      for (const bracket of gridBrackets(xs, stuck)) brackets.push({setup: s, line: li, bracket})
    }),
  )
  let refined = 0
  for (let round = 0; round < maxBisectionRounds; round++) {
    const open = brackets.filter((b) => !converged(b.bracket, x) && !stalled(b.bracket, x))
    if (open.length === 0) break
    const mids = open.map((b) => midpoint(b.bracket, x))
    const answers = await runner.run(
      open.map((b, i) => ({setup: b.setup, x: mids[i], y: lineYs[b.line] ?? NaN})),
      (done) => progress?.('tipping points', refined + done, refined + open.length),
    )
    refined += open.length
    open.forEach((b, i) => (b.bracket = narrow(b.bracket, mids[i], answers[i].outcome === 'stuck')))
  }

  const lines = setups.map((_, s) =>
    lineYs.map((ly, li): LineEdges => {
      const row = lineAt(s, li)
      return {
        y: ly,
        startsStuck: row[0].outcome === 'stuck',
        endsStuck: row[row.length - 1].outcome === 'stuck',
        transitions: brackets.filter((b) => b.setup === s && b.line === li).map((b) => transitionOf(b.bracket)),
      }
    }),
  )
  return {
    scenario,
    axes,
    setups: setups.map(({name, policy}, s) => {
      const tipping = lines[s][lineYs.indexOf(tipY)]
      return {
        name,
        policy,
        cells: results.slice(s * lineYs.length * xs.length, (s * lineYs.length + gridYs.length) * xs.length),
        edges: lines[s].slice(0, gridYs.length),
        tipping,
        sentence: setupSentence(name, policy, tipping, x, y, scenario),
      }
    }),
  }
}

/**
 * The tipping point in words, said of the scenario at the line's row (so "of 20 servers" follows a
 * swept pool size), and saying so when the pool tips only where demand is past what it can serve
 * healthy: that is not a metastable pool but one too small, and an operator must not read it otherwise.
 */
export function setupSentence(name: string, policy: Policy, line: LineEdges, x: Axis, y: Axis | undefined, scenario: Scenario): string {
  const at = y && line.y !== null ? y.param.apply({scenario, policy}, line.y).scenario : scenario
  const words = tippingSentence(name, line, x, y?.param ?? null, at)
  // The stuck side of the first edge is what the sentence is about; a line stuck throughout has no edge to qualify.
  const edge = line.transitions[0]?.stuck
  if (edge === undefined) return words
  const cell = x.param.apply({scenario: at, policy}, edge).scenario
  const capacity = healthyCapacity(cell)
  if (cell.demand.rps === undefined || cell.demand.rps <= capacity) return words
  return `${words.replace(/\.$/, '')} (there demand is past the ${formatNumber(capacity)} rps the pool serves with every server healthy: too small a pool, not a stuck one).`
}

const round = (v: number | null): number | null => (v === null ? null : Math.round(v * 1000) / 1000)

export function outcomeCounts(cells: CellResult[]): Record<CellOutcome, number> {
  const counts = Object.fromEntries(outcomes.map((o) => [o, 0])) as Record<CellOutcome, number>
  for (const c of cells) counts[c.outcome]++
  return counts
}

/** The `--json` of `sluice simulate --sweep`: the whole grid, and the tipping points in figures and words. */
export function sweepJson(result: SweepResult) {
  const [x, y] = result.axes
  const lineJson = (line: LineEdges) => ({
    y: line.y,
    startsStuck: line.startsStuck,
    endsStuck: line.endsStuck,
    transitions: line.transitions.map((t) => ({direction: t.into ? 'into-stuck' : 'out-of-stuck', holds: round(t.holds), stuck: round(t.stuck)})),
  })
  return {
    scenario: result.scenario.name,
    axes: result.axes.map((a) => ({param: a.param.name, unit: a.param.unit, from: a.from, to: a.to, values: a.values})),
    tippingPoints: result.setups.map((s) => s.sentence),
    setups: result.setups.map((s) => {
      const figures = tippingFigures(s.tipping, x)
      return {
        name: s.name,
        policy: s.policy,
        counts: outcomeCounts(s.cells),
        tipping: {
          along: x.param.name,
          at: y && s.tipping.y !== null ? {param: y.param.name, value: s.tipping.y} : null,
          holdsUpTo: round(figures.holdsUpTo),
          stuckFrom: round(figures.stuckFrom),
          ...lineJson(s.tipping),
          sentence: s.sentence,
        },
        edges: s.edges.map(lineJson),
        cells: s.cells.map((c, i) => ({
          x: x.values[i % x.values.length],
          y: y ? y.values[Math.floor(i / x.values.length)] : null,
          outcome: c.outcome,
          recoveredSecondsAfterFix: round(c.recoveredSecondsAfterFix),
          meanServedDuringFault: round(c.meanServedDuringFault),
        })),
      }
    }),
  }
}

export type SweepJson = ReturnType<typeof sweepJson>
