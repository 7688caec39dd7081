export /** Hands out per-server typed arrays as consecutive views on one ArrayBuffer, widest first so each view is aligned. */
class Slab {
  private readonly buffer: ArrayBuffer
  private offset = 0

  constructor(
    private readonly n: number,
    float64s: number,
    int32s: number,
    uint8s: number,
  ) {
    this.buffer = new ArrayBuffer(n * (8 * float64s + 4 * int32s + uint8s))
  }

  float64(): Float64Array {
    return new Float64Array(this.buffer, this.take(8), this.n)
  }

  int32(): Int32Array {
    return new Int32Array(this.buffer, this.take(4), this.n)
  }

  uint8(): Uint8Array {
    return new Uint8Array(this.buffer, this.take(1), this.n)
  }

  private take(bytes: number): number {
    const at = this.offset
    this.offset += bytes * this.n
    if (this.offset > this.buffer.byteLength) throw new Error('Slab: more arrays asked for than it was sized for')
    return at
  }
}
