import {FailedError} from '../errors.js'
import type {Scenario} from '../sim/scenario/schema.js'
import {cellInput, type CellQuery, type CellResult, type SweepJob} from '../sweep/classify.js'
import {formatNumber} from '../sweep/params.js'
import type {CellRunner} from '../sweep/workers.js'

/**
 * What an assessment may spend, counted in the simulator's own unit of work: servers × ticks
 * stepped through, the figure the scenario schema already bounds a run by. Counted, not timed, so
 * the same question gets the same answer on any machine and under any load: what is done and what
 * is left out never depends on how busy the cores were. At the simulator's some 50–70 M
 * server-ticks a second on one thread, --quick's budget is a few seconds of work at the most and
 * the map's some tens of seconds spread over the workers; a typical assessment spends a fraction
 * of it (docs/assess.md, "Work and its budget").
 */
export const defaultBudget = {quick: 3e8, map: 2e9}

/** The servers × ticks one run of a scenario steps through, every pool's servers counted. */
export function runCost(scenario: Scenario): number {
  const servers = scenario.pools.reduce((n, p) => n + (p.kind === 'servers' ? (p.servers ?? 0) : 0), 0)
  return servers * Math.ceil(scenario.duration / scenario.tick - 1e-9)
}

/** Thrown inside the meter when a batch of runs would take the assessment past its budget: the batch is not run. */
export class BudgetExhausted extends Error {
  constructor(
    readonly asked: number,
    readonly left: number,
  ) {
    super(`a batch of ${asked.toExponential(2)} server-ticks with ${left.toExponential(2)} left of the budget`)
  }
}

/**
 * The assessment could not answer within its budget even in the part it cannot leave out (where
 * the pool is and whether it comes back): exit 1, saying what one run costs and what the budget is.
 */
export class AssessBudgetError extends FailedError {}

/** Servers × ticks in words: `3.5e+8` reads badly in a sentence; `350,000,000` reads at a glance. */
export const serverTicks = (n: number): string => `${formatNumber(Math.round(n))} server-ticks`

/** The budget of one assessment and what has been spent of it. A batch that would pass the limit is refused whole, before it runs. */
export class WorkMeter {
  spent = 0

  constructor(readonly limit: number) {}

  get left(): number {
    return this.limit - this.spent
  }

  charge(cost: number): void {
    if (cost > this.left) throw new BudgetExhausted(cost, this.left)
    this.spent += cost
  }

  /** Work already done that could not be priced before it ran (rehearsals): counted, never refused. */
  spend(cost: number): void {
    this.spent += cost
  }

  /** One run, charged before it starts. */
  run<T>(scenario: Scenario, work: () => T): T {
    this.charge(runCost(scenario))
    return work()
  }
}

/**
 * The sweeps' runner with every batch charged to the meter before it is handed on: a cell's cost
 * is its own scenario's (a cell along `servers` costs more than one along demand).
 */
export function meteredRunner(runner: CellRunner, meter: WorkMeter): CellRunner {
  let job: SweepJob | null = null
  return {
    retarget(next) {
      job = next
      runner.retarget(next)
    },
    run(cells: CellQuery[], progress?: (done: number) => void): Promise<CellResult[]> {
      if (!job) throw new Error('a metered runner runs no cells before it is given a job')
      const current = job
      meter.charge(cells.reduce((sum, q) => sum + runCost(cellInput(current, q).scenario), 0))
      return runner.run(cells, progress)
    },
    close: () => runner.close(),
  }
}
