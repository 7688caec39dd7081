import type {Restriction, RestrictionPort} from '../../ports/control-plane.js'
import type {Fleet} from '../fleet.js'

/** Restrictions as the fleet's restricted traffic types. */
export class SimRules implements RestrictionPort {
  readonly label = 'listener rules (simulated)'
  private readonly rules = new Map<string, Restriction>()

  constructor(private readonly fleet: Fleet) {}

  async list(): Promise<Restriction[]> {
    return [...this.rules.values()]
  }

  async add(restriction: Restriction): Promise<void> {
    this.fleet.setRestricted(restriction.type, restriction.share ?? 100, restriction.retryAfterSeconds)
    this.rules.set(restriction.type, restriction)
  }

  async remove(type: string): Promise<boolean> {
    if (!this.rules.has(type)) return false
    this.fleet.setRestricted(type, 0)
    this.rules.delete(type)
    return true
  }
}
