import {readdirSync, readFileSync} from 'node:fs'

/**
 * How long a drill's processes were ready to run and waited for a CPU: the kernel's own account
 * of every thread (/proc/PID/task/TID/schedstat: nanoseconds on a CPU, nanoseconds waiting on a
 * run queue). The event loops' lateness sees only the two Node processes and only at their timers;
 * this sees HAProxy too, and every thread, so another process taking the cores shows here even when
 * no timer of ours fires late enough to cross its limit. Linux only: elsewhere it is not measured.
 */
export interface CpuWait {
  /** CPU seconds the watched threads ran. */
  runSeconds: number
  /** Seconds they were ready to run and waited. */
  waitSeconds: number
  /** Of the time they were ready, the share spent waiting: wait ÷ (run + wait). */
  share: number
  /** Times a thread was put on a CPU. */
  slices: number
  /** Milliseconds a thread waited each time it was ready, on average: what the machine adds to every wake-up. */
  meanWaitMs: number
}

interface Counters {
  run: number
  wait: number
  slices: number
}

/** A thread's counters, in nanoseconds; null once it has gone (or on a system without schedstat). */
function readSchedstat(path: string): Counters | null {
  try {
    const [run, wait, slices] = readFileSync(path, 'utf8').split(' ').map(Number)
    return Number.isFinite(run) && Number.isFinite(wait) && Number.isFinite(slices) ? {run, wait, slices} : null
  } catch {
    return null
  }
}

export function cpuWaitMeasurable(): boolean {
  return readSchedstat('/proc/self/schedstat') !== null
}

/**
 * Watches processes from now until `stop`, reading every thread each `intervalMs` so a thread that
 * ends between two reads loses at most one interval. A thread seen at the first read counts from
 * that read; one first seen later was born since, and counts from its birth (zero).
 */
export class CpuWaitWatch {
  private readonly first = new Map<string, Counters>()
  private readonly last = new Map<string, Counters>()
  private readonly pids: number[] = []
  private readonly timer: NodeJS.Timeout | null
  private readonly measurable = cpuWaitMeasurable()

  constructor(pids: number[], intervalMs = 1000) {
    for (const pid of pids) this.watch(pid)
    this.timer = this.measurable ? setInterval(() => this.sample(false), intervalMs) : null
    this.timer?.unref()
  }

  /** Adds a process, its threads counted from now. */
  watch(pid: number): void {
    if (this.pids.includes(pid)) return
    this.pids.push(pid)
    if (this.measurable) this.sample(true, [pid])
  }

  /** The wait over the watch; null where the kernel does not keep it. */
  stop(): CpuWait | null {
    if (this.timer) clearInterval(this.timer)
    if (!this.measurable) return null
    this.sample(false)
    let run = 0
    let wait = 0
    let slices = 0
    for (const [thread, end] of this.last) {
      const start = this.first.get(thread) ?? {run: 0, wait: 0, slices: 0}
      run += end.run - start.run
      wait += end.wait - start.wait
      slices += end.slices - start.slices
    }
    return {
      runSeconds: run / 1e9,
      waitSeconds: wait / 1e9,
      share: run + wait > 0 ? wait / (run + wait) : 0,
      slices,
      meanWaitMs: slices > 0 ? wait / slices / 1e6 : 0,
    }
  }

  private sample(baseline: boolean, pids = this.pids): void {
    for (const pid of pids) {
      let tids: string[]
      try {
        tids = readdirSync(`/proc/${pid}/task`)
      } catch {
        continue
      }
      for (const tid of tids) {
        const counters = readSchedstat(`/proc/${pid}/task/${tid}/schedstat`)
        if (counters === null) continue
        const thread = `${pid}/${tid}`
        if (baseline && !this.first.has(thread)) this.first.set(thread, counters)
        this.last.set(thread, counters)
      }
    }
  }
}
