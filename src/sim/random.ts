/**
 * A small seeded generator (sfc32, seeded through splitmix32) so that every draw the simulator
 * makes is reproducible from the scenario's seed, on every platform, byte for byte.
 */
export class Random {
  // The four 32-bit words live in a typed array: as object fields, values above 2^31 are not small
  // integers to V8 and every draw would box them.
  private readonly s = new Uint32Array(4)

  constructor(seed: number) {
    let x = seed >>> 0
    const next = (): number => {
      x = (x + 0x9e3779b9) >>> 0
      let z = x
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b)
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35)
      return (z ^ (z >>> 16)) >>> 0
    }
    for (let i = 0; i < 4; i++) this.s[i] = next()
    for (let i = 0; i < 12; i++) this.next()
  }

  /** A float in [0, 1). */
  next(): number {
    const s = this.s
    const a = s[0]
    const b = s[1]
    const c = s[2]
    const d = s[3]
    const t = (((a + b) >>> 0) + d) >>> 0
    s[3] = d + 1
    s[0] = b ^ (b >>> 9)
    s[1] = c + (c << 3)
    const rotated = ((c << 21) | (c >>> 11)) >>> 0
    s[2] = rotated + t
    return t / 4294967296
  }

  /** An integer in [0, n). */
  below(n: number): number {
    return Math.floor(this.next() * n)
  }

  /** Shuffles the first `length` entries of `items` in place (Fisher–Yates). */
  shuffle(items: Int32Array, length: number): void {
    for (let i = length - 1; i > 0; i--) {
      const j = this.below(i + 1)
      const tmp = items[i]
      items[i] = items[j]
      items[j] = tmp
    }
  }

  /**
   * A count drawn from a Poisson distribution of this mean: Knuth's product of uniforms below a
   * mean of 30, above it the normal approximation (mean and variance both the mean, never below 0),
   * where the two differ by less than a count's rounding.
   */
  poisson(mean: number): number {
    if (mean <= 0) return 0
    if (mean < 30) {
      const limit = Math.exp(-mean)
      let k = 0
      let product = this.next()
      while (product > limit) {
        k++
        product *= this.next()
      }
      return k
    }
    // Box–Muller: 1 − next() is in (0, 1], so the logarithm is finite.
    const z = Math.sqrt(-2 * Math.log(1 - this.next())) * Math.cos(2 * Math.PI * this.next())
    return Math.max(0, Math.round(mean + Math.sqrt(mean) * z))
  }

  /** A standard normal (Box–Muller; 1 − next() is in (0, 1], so the logarithm is finite). */
  normal(): number {
    return Math.sqrt(-2 * Math.log(1 - this.next())) * Math.cos(2 * Math.PI * this.next())
  }

  /**
   * A draw of mean 1 whose coefficient of variation is `cv`: a Gamma of shape 1 / cv², scaled
   * (cv 1 is exponential, a service time under M/M/c); exactly 1 for cv 0. Marsaglia and Tsang's
   * method, with a shape below 1 raised by one and paid back with a power of a uniform.
   */
  spread(cv: number): number {
    if (cv <= 0) return 1
    const shape = 1 / (cv * cv)
    const boosted = shape < 1 ? shape + 1 : shape
    const d = boosted - 1 / 3
    const c = 1 / Math.sqrt(9 * d)
    let g: number
    for (;;) {
      const z = this.normal()
      const v0 = 1 + c * z
      if (v0 <= 0) continue
      const v = v0 * v0 * v0
      const u = 1 - this.next()
      if (Math.log(u) < 0.5 * z * z + d - d * v + d * Math.log(v)) {
        g = d * v
        break
      }
    }
    if (shape < 1) g *= Math.pow(1 - this.next(), 1 / shape)
    return g / shape
  }
}
