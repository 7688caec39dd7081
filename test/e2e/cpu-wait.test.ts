import {spawn} from 'node:child_process'
import {once} from 'node:events'
import {availableParallelism} from 'node:os'
import {describe, expect, it} from 'vitest'
import {CpuWaitWatch, cpuWaitMeasurable} from '../../src/drill/cpu-wait.js'

/**
 * A process that spins until it has used `cpuSeconds` of CPU (so what it runs does not hang on
 * how busy the machine is), says so, and sleeps `restSeconds` before it exits.
 */
function spinner(cpuSeconds: number, restSeconds = 2) {
  const child = spawn(process.execPath, [
    '-e',
    `while (process.cpuUsage().user < ${cpuSeconds * 1e6}); console.log('spun'); setTimeout(() => {}, ${restSeconds * 1000})`,
  ])
  const spun = once(child.stdout, 'data')
  const exited = once(child, 'exit')
  return {pid: child.pid!, spun, exited, kill: () => child.kill()}
}

describe.runIf(cpuWaitMeasurable())('CpuWaitWatch', () => {
  it('sees a process wait for a CPU when more processes spin than there are cores, and a sleeping one wait for none', async () => {
    // One spinner more than the cores: between them they are ready for more CPU than there is.
    const spinners = Array.from({length: availableParallelism() + 1}, () => spinner(1))
    // sleep(1), not a Node process: an idle Node still wakes its own threads (the GC, the compiler's
    // workers finishing start-up), and on a machine the suite keeps busy each wake-up waits for a core.
    const sleeper = spawn('sleep', ['10'])
    await once(sleeper, 'spawn')
    await new Promise((resolve) => setTimeout(resolve, 50))
    const watched = new CpuWaitWatch([spinners[0].pid], 100)
    const idle = new CpuWaitWatch([sleeper.pid!], 100)
    try {
      await Promise.all(spinners.map((s) => s.spun))
      const busy = watched.stop()!
      const quiet = idle.stop()!
      // It spun a second of CPU; n + 1 spinners on n cores each wait about a third of that, or more.
      expect(busy.runSeconds).toBeGreaterThan(0.8)
      expect(busy.waitSeconds).toBeGreaterThan(0.1)
      expect(busy.share).toBeGreaterThan(0.1)
      expect(busy.slices).toBeGreaterThan(0)
      expect(busy.meanWaitMs).toBeCloseTo((busy.waitSeconds * 1000) / busy.slices, 6)
      // Asleep throughout, it was never ready to run.
      expect(quiet.runSeconds).toBeLessThan(0.05)
      expect(quiet.waitSeconds).toBeLessThan(0.05)
    } finally {
      spinners.forEach((s) => s.kill())
      sleeper.kill()
    }
  }, 60_000)

  it('counts a process added during the watch from then, and keeps its count once it has ended', async () => {
    const watch = new CpuWaitWatch([], 100)
    const late = spinner(0.5, 1)
    watch.watch(late.pid)
    await late.exited
    const after = watch.stop()!
    // Its half second of CPU, read while it rested before it exited; it is gone by the last read.
    expect(after.runSeconds).toBeGreaterThan(0.4)
  }, 60_000)
})
