import type {FreezePort, FreezeRecord} from '../../ports/control-plane.js'

/** A rehearsal's freeze: it lives as long as the rehearsal, and no pipeline ever reads it. */
export class MemoryFreeze implements FreezePort {
  private record: FreezeRecord | null = null
  async get(): Promise<FreezeRecord | null> {
    return this.record
  }
  async set(record: FreezeRecord): Promise<void> {
    this.record = record
  }
  async clear(): Promise<void> {
    this.record = null
  }
}
