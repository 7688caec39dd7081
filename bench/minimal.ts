/**
 * The yardstick for the simulator's speed: one hand-written typed-array loop that does the same
 * arithmetic as sluice for the seed scenario's feature set (outlook-2026: one pool, equal
 * servers, no handshake cost or churn, no cold start, no thread holds, one attempt per request;
 * health checks with Envoy-style ejection, the ejection cap, panic, shedding or goodput collapse,
 * slow start), at any size. It is not product code: it exists so that `npm run bench` can say how
 * far the simulator's generality costs it from the limit. It gives the same figures as the
 * simulator, bit for bit (the bench checks that before it reports a ratio), so it does the same
 * work: every server every tick, the weights, the checks and the same seeded draws.
 */
import type {Policy} from '../src/sim/config.js'
import {Random} from '../src/sim/random.js'

export interface SeedCase {
  servers: number
  capacity: number
  demand: number
  broken: number
  from: number
  to: number
  ticks: number
  seed: number
  interval: number
  baseEjection: number
  maxEjection: number
  policy: Policy
}

export interface MinimalRecord {
  served: Float64Array
  failed: Float64Array
  inRotation: Float64Array
}

export function minimalSeedRun(c: SeedCase): MinimalRecord {
  const n = c.servers
  const random = new Random(c.seed)
  // The broken servers: the same seeded draw the simulator makes.
  const order = Int32Array.from({length: n}, (_, i) => i)
  random.shuffle(order, n)
  const broken = new Uint8Array(n)
  const victims = order.subarray(0, Math.min(c.broken, n))

  const open = new Float64Array(n).fill(c.demand / n)
  const ejected = new Uint8Array(n)
  const ejectedUntil = new Int32Array(n)
  const timesEjected = new Int32Array(n)
  const slowStart = new Int32Array(n).fill(-1)
  const failing = new Uint8Array(n)
  const weight = new Float64Array(n)
  const ones = new Float64Array(n).fill(1)
  const candidates = new Int32Array(n)
  const out: MinimalRecord = {served: new Float64Array(c.ticks), failed: new Float64Array(c.ticks), inRotation: new Float64Array(c.ticks)}

  const {policy} = c
  const slowTicks = policy.slowStart
  const minWeight = policy.slowStartMinWeightPercent / 100
  const maxEjected = Math.floor((n * policy.maxEjectionPercent) / 100)
  const cap = c.capacity
  const routed = c.demand
  let ejectedCount = 0
  /** Servers with an ejection not yet forgiven: while there are any, every check has work. */
  let unforgiven = 0
  let inRotation = 0
  let totalWeight = 0
  let weightsValid = false
  let slowing = false
  let nextTimer = 0

  for (let t = 0; t < c.ticks; t++) {
    if (t === c.from || t === c.to) for (const i of victims) broken[i] = t === c.from ? 1 : 0

    if (!weightsValid || slowing || t >= nextTimer) {
      inRotation = 0
      totalWeight = 0
      slowing = false
      nextTimer = 2 ** 30
      for (let i = 0; i < n; i++) {
        if (ejected[i] !== 0) {
          if (t >= ejectedUntil[i]) {
            ejected[i] = 0
            ejectedCount--
            if (slowTicks > 0) slowStart[i] = t
          } else if (ejectedUntil[i] < nextTimer) nextTimer = ejectedUntil[i]
        }
        let w = 0
        if (ejected[i] === 0) {
          inRotation++
          w = 1
          const since = slowStart[i]
          if (since >= 0) {
            const elapsed = t - since
            if (elapsed < slowTicks) {
              w = elapsed / slowTicks
              if (w < minWeight) w = minWeight
              slowing = true
            } else slowStart[i] = -1
          }
        }
        weight[i] = w
        totalWeight += w
      }
      weightsValid = true
    }
    const panic = policy.panicThreshold > 0 && (inRotation * 100) / n < policy.panicThreshold
    const total = panic ? n : totalWeight
    const weights = panic ? ones : weight

    let served = 0
    let fast = 0
    let slow = 0
    let anyFailing = false
    if (total === 0) {
      fast = routed
      for (let i = 0; i < n; i++) {
        open[i] = 0
        failing[i] = broken[i]
        if (broken[i] !== 0) anyFailing = true
      }
    } else {
      const perWeight = routed / total
      for (let i = 0; i < n; i++) {
        const l = perWeight * weights[i]
        if (broken[i] !== 0) {
          open[i] = 0
          failing[i] = 1
          anyFailing = true
          slow += l
          continue
        }
        const onOpen = l < open[i] ? l : open[i]
        const fresh = l - onOpen
        const work = onOpen + fresh
        let done = work
        let late = 0
        if (work > cap) {
          if (policy.shed) {
            done = onOpen >= cap ? cap : onOpen + (cap - onOpen)
            fast += work - done
          } else {
            done = work * ((cap * Math.max(0, 1 - (work / cap - 1))) / work)
            slow += work - done
            late = 1
            anyFailing = true
          }
        }
        open[i] = done
        failing[i] = late
        served += done
      }
    }
    out.served[t] = served
    out.failed[t] = fast + slow
    out.inRotation[t] = total === 0 ? 0 : panic ? n : inRotation

    if (t % c.interval === 0 && (anyFailing || unforgiven > 0)) {
      let count = 0
      for (let i = 0; i < n; i++) {
        if (ejected[i] !== 0) continue
        if (failing[i] !== 0) candidates[count++] = i
        else if (timesEjected[i] > 0 && --timesEjected[i] === 0) unforgiven--
      }
      const room = maxEjected - ejectedCount
      if (count > 0 && room > 0) {
        if (count > room) random.shuffle(candidates, count)
        const take = Math.min(room, count)
        for (let k = 0; k < take; k++) {
          const i = candidates[k]
          if (timesEjected[i]++ === 0) unforgiven++
          ejected[i] = 1
          ejectedUntil[i] = t + Math.max(1, Math.round(Math.min(c.baseEjection * timesEjected[i], c.maxEjection)))
          slowStart[i] = -1
          ejectedCount++
        }
        weightsValid = false
      }
    }
  }
  return out
}
