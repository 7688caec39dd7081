import type {HookPort, HookSpec, Target} from '../../ports/control-plane.js'
import type {VirtualClock} from '../clock.js'
import type {Fleet} from '../fleet.js'
import {indexOf} from './target-ids.js'

/** Hooks in a rehearsal run no commands: a restart restarts the simulated server, a remediation repairs it. */
export class SimHooks implements HookPort {
  constructor(
    private readonly fleet: Fleet,
    private readonly clock: VirtualClock,
  ) {}

  async run(kind: 'restart' | 'remediate', _hook: HookSpec, target: Target, signal?: AbortSignal): Promise<void> {
    const pool = this.fleet.pools.find((p) => target.id.startsWith(`${p.config.name}-`))
    if (!pool) throw new Error(`no simulated pool holds ${target.id}`)
    const i = indexOf(pool, target.id)
    if (kind === 'remediate') {
      pool.remediate([i])
      return
    }
    pool.restart([i], this.fleet.tick, pool.config.restartSeconds)
    await this.clock.sleep(pool.config.restartSeconds, signal)
  }
}
