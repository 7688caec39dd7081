import {spawn} from 'node:child_process'
import {availableParallelism} from 'node:os'
import {describe, expect, it} from 'vitest'
import {CpuWaitWatch, cpuWaitMeasurable} from '../../src/drill/cpu-wait.js'

/** A process that spins for `seconds`, then exits. */
function spinner(seconds: number) {
  const child = spawn(process.execPath, ['-e', `const end = Date.now() + ${seconds * 1000}; while (Date.now() < end);`])
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  return {pid: child.pid!, exited}
}

describe.runIf(cpuWaitMeasurable())('CpuWaitWatch', () => {
  it('sees a process wait for a CPU when more processes spin than there are cores, and one that sleeps wait for none', async () => {
    // One spinner more than the cores: between them they are ready for more CPU than there is.
    const spinners = Array.from({length: availableParallelism() + 1}, () => spinner(2))
    const sleeper = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 2000)'])
    const watched = new CpuWaitWatch([spinners[0].pid], 200)
    const idle = new CpuWaitWatch([sleeper.pid!], 200)
    await Promise.all(spinners.map((s) => s.exited))
    const busy = watched.stop()!
    const quiet = idle.stop()!
    sleeper.kill()
    // n + 1 spinners on n cores: each gets about n / (n + 1) of one, and waits the rest.
    expect(busy.share).toBeGreaterThan(0.1)
    expect(busy.runSeconds).toBeGreaterThan(0.5)
    expect(busy.waitSeconds).toBeGreaterThan(0.1)
    // Asleep it is never ready to run: whatever it waited was its start, not a starved run.
    expect(quiet.runSeconds).toBeLessThan(0.5)
    expect(quiet.waitSeconds).toBeLessThan(busy.waitSeconds)
  }, 30_000)

  it('counts a process added during the watch from then, and keeps its count once it has ended', async () => {
    const watch = new CpuWaitWatch([], 100)
    const late = spinner(0.6)
    watch.watch(late.pid)
    await late.exited
    const after = watch.stop()!
    // The spinner ran about 0.6 s; the read before it ended kept most of it.
    expect(after.runSeconds).toBeGreaterThan(0.2)
  }, 30_000)
})
