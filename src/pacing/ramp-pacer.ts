import type {ControlPlane, MetricsPort} from '../ports/control-plane.js'
import {bandRise, nextShare, ProbeStep, readBand, readRoom, type Band} from './pacer.js'
import {waitSaidEvery} from './room.js'
import type {PaceRule} from './rule.js'

/** What a paced ramp needs of its run: the ports it reads, a pausable wait, and a line to say what it does. */
export interface PaceContext {
  control: ControlPlane
  metrics: () => MetricsPort
  signal: AbortSignal
  hold(seconds: number, where: string): Promise<'done' | 'promoted' | 'interrupted'>
  progress(message: string): void
}

export type PacedNext = {kind: 'step'; to: number} | {kind: 'held'; message: string} | {kind: 'interrupted'}

/**
 * The steps of one `schedule: auto` ramp, found as it runs: `next` before each change, `took`
 * after each change whose gate passed. It reads; the ramp changes, bakes, judges and reverts as a
 * written ramp does.
 */
export class RampPacer {
  private readonly probe: ProbeStep
  private before: Band | null = null

  constructor(
    private readonly rule: PaceRule,
    private readonly ctx: PaceContext,
    /** Seconds of demand a share is sized against: the gate's window. */
    private readonly window: number,
    /** Seconds between looks while the pool has no room: the gate's interval. */
    private readonly interval: number,
    private readonly bake: number,
    /** The weights' TTL: behind weighted DNS a step's handshakes spread over it (0 behind a load balancer). */
    private readonly ttl: number,
  ) {
    this.probe = new ProbeStep(rule)
  }

  /** The share (%) to step to from `from`, at most `end`; or a hold, with why in numbers. */
  async next(from: number, end: number): Promise<PacedNext> {
    const {rule, ctx} = this
    if (rule.perTarget === null) {
      // A probe's band is the window before the step, as long as the bake that will be compared with it.
      this.before = await readBand(ctx.metrics(), rule.pool, this.bandWindow(), ctx.signal)
      const to = this.probe.next(from, end)
      ctx.progress(`probing ${rule.pool}: a step of ${to - from} points to ${to}%`)
      return {kind: 'step', to}
    }
    const started = ctx.control.clock.now()
    let said = -Infinity
    for (;;) {
      const reading = await readRoom({...rule, perTarget: rule.perTarget}, ctx.control, this.window, from, ctx.signal)
      if (typeof reading === 'string') return {kind: 'held', message: `holding at ${from}%: ${reading}`}
      const decision = nextShare(rule, from, end, reading, this.ttl)
      if (decision.kind === 'step') {
        ctx.progress(`paced to ${decision.to}%: ${decision.why}`)
        return {kind: 'step', to: decision.to}
      }
      const waited = ctx.control.clock.now() - started
      if (waited >= rule.wait) return {kind: 'held', message: `holding at ${from}% after waiting ${Math.round(waited)} s for room: ${decision.why}`}
      // Said when the wait starts and once a minute after: a look every gate interval is too many lines.
      if (waited - said >= waitSaidEvery) {
        ctx.progress(`waiting for room at ${from}% (${Math.round(waited)} of ${rule.wait} s): ${decision.why}`)
        said = waited
      }
      const held = await ctx.hold(Math.min(this.interval, rule.wait - waited), `waiting for room on ${rule.pool} at ${from}%`)
      if (held === 'interrupted') return {kind: 'interrupted'}
      if (held === 'promoted') {
        // A person who promotes a waiting ramp takes the smallest step on their word; the journal has the promote.
        const to = Math.min(end, from + rule.minStep)
        ctx.progress(`promoted: stepping ${rule.minStep} points to ${to}% without the room (${decision.why})`)
        return {kind: 'step', to}
      }
    }
  }

  /**
   * After a step's gate passed: a probe compares the pool's band with the window before the step,
   * grows its next step when the pool stayed in it, and halves it when it did not, then waits a
   * bake and steps again only once the pool has stopped rising: its band then within the rule of
   * the one read right after the step. A pool still rising is looked at every interval up to
   * `wait`, then the ramp holds where it is (a p99 that rose tenfold and keeps rising leaves room
   * for no step, however small; one that rose to a new level and stays there does).
   */
  async took(at: number): Promise<{kind: 'done'} | {kind: 'held'; message: string} | {kind: 'interrupted'}> {
    const {rule, ctx} = this
    if (rule.perTarget !== null || this.before === null) return {kind: 'done'}
    const after = await readBand(ctx.metrics(), rule.pool, this.bandWindow(), ctx.signal)
    const rise = bandRise(rule, this.before, after)
    if (rise === null) {
      this.probe.grow()
      return {kind: 'done'}
    }
    this.probe.halve()
    ctx.progress(`${rise}: the next step is ${this.probe.points} points, after a bake at ${at}% and once ${rule.pool} has stopped rising`)
    const started = ctx.control.clock.now()
    let look = this.bake
    for (;;) {
      const held = await ctx.hold(look, `letting ${rule.pool} settle at ${at}%`)
      if (held === 'interrupted') return {kind: 'interrupted'}
      // A promote goes on from here on the operator's word, with the halved step; the journal has the promote.
      if (held === 'promoted') return {kind: 'done'}
      const rising = bandRise(rule, after, await readBand(ctx.metrics(), rule.pool, this.bandWindow(), ctx.signal))
      if (rising === null) return {kind: 'done'}
      const waited = ctx.control.clock.now() - started
      if (waited >= rule.wait)
        return {kind: 'held', message: `holding at ${at}% after waiting ${Math.round(waited)} s for ${rule.pool} to stop rising: ${rising}`}
      look = Math.min(this.interval, rule.wait - waited)
    }
  }

  private bandWindow(): number {
    return Math.max(1, Math.min(this.window, this.bake))
  }
}
