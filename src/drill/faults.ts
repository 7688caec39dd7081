import type {Scenario} from '../sim/scenario/schema.js'
import type {FleetCommand} from './fleet.js'
import type {DrillScales} from './scale.js'

/**
 * A scenario's faults as fleet commands on the drill's clock: each fault switched on at its
 * `from` and off at its `to`, both times the time scale, measured from `start()`.
 *
 * - broken: the pool's first `servers` servers hang or refuse (the fault's mode), then serve again;
 * - thread-hold: requests of the type hold a thread for holdSeconds × the time scale, then lifted;
 * - errors: every server of the pool answers the share of what it serves with a 500, then stops.
 *
 * A metadata outage (a shared lookup service with a capacity of its own) has no part in the
 * loopback fleet yet: such faults are returned as unsupported, for the drill to refuse by name.
 */
export interface FaultStep {
  /** Wall seconds from the start. */
  at: number
  command: FleetCommand
}

export function faultSteps(scenario: Scenario, scales: DrillScales): {steps: FaultStep[]; unsupported: number[]} {
  const firstPool = scenario.pools[0].name
  const steps: FaultStep[] = []
  const unsupported: number[] = []
  scenario.faults.forEach((fault, index) => {
    const pool = fault.pool ?? firstPool
    const from = fault.from * scales.timeScale
    const to = fault.to * scales.timeScale
    if (fault.kind === 'broken') {
      const servers = Array.from({length: fault.servers}, (_, i) => i)
      steps.push({at: from, command: {op: 'fault', pool, servers, mode: fault.mode}})
      steps.push({at: to, command: {op: 'fault', pool, servers, mode: 'none'}})
    } else if (fault.kind === 'thread-hold') {
      steps.push({at: from, command: {op: 'hold', pool, type: fault.type, holdSeconds: fault.holdSeconds * scales.timeScale, release: fault.release}})
      steps.push({at: to, command: {op: 'hold', pool, type: null}})
    } else if (fault.kind === 'errors') {
      // Overlapping faults add up, as the simulator's do: each edge sets the sum of those active then.
      const erring = scenario.faults.filter((f) => f.kind === 'errors' && (f.pool ?? firstPool) === pool)
      const at = (s: number) =>
        Math.min(
          100,
          erring.reduce((sum, f) => sum + (f.from <= s && s < f.to ? (f.kind === 'errors' ? f.percent : 0) : 0), 0),
        )
      steps.push({at: from, command: {op: 'errors', pool, percent: at(fault.from)}})
      steps.push({at: to, command: {op: 'errors', pool, percent: at(fault.to)}})
    } else {
      unsupported.push(index)
    }
  })
  steps.sort((a, b) => a.at - b.at)
  return {steps, unsupported}
}

export interface RunningFaults {
  /** Resolves when every step has been sent or the rest cancelled; rejects with the first command that failed. */
  done: Promise<void>
  /** Cancels the steps not yet sent. */
  cancel(): void
}

/** Sends each step at its time. A failed command cancels the rest: a drill cannot run a fault it could not set. */
export function playFaults(steps: FaultStep[], send: (command: FleetCommand) => Promise<void>): RunningFaults {
  const start = performance.now()
  const timers = new Set<NodeJS.Timeout>()
  let cancelled = false
  let finish = () => {}
  const cancel = () => {
    cancelled = true
    for (const timer of timers) clearTimeout(timer)
    timers.clear()
    finish()
  }
  const done = new Promise<void>((resolve, reject) => {
    finish = resolve
    let left = steps.length
    if (left === 0) return resolve()
    for (const step of steps) {
      const timer = setTimeout(
        () => {
          timers.delete(timer)
          if (cancelled) return
          send(step.command).then(
            () => {
              if (--left === 0) resolve()
            },
            (error: unknown) => {
              reject(error)
              cancel()
            },
          )
        },
        Math.max(0, step.at * 1000 - (performance.now() - start)),
      )
      timers.add(timer)
    }
  })
  return {done, cancel}
}
