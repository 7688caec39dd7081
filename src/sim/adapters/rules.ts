import type {Restriction, RestrictionPort} from '../../ports/control-plane.js'
import type {Fleet} from '../fleet.js'

/** Restrictions as the fleet's restricted traffic types. */
export class SimRules implements RestrictionPort {
  readonly label = 'listener rules (simulated)'
  private readonly rules = new Map<string, Restriction>()

  constructor(private readonly fleet: Fleet) {}

  /**
   * The rules sluice added, and what the scenario itself turns away (its `restrictions`, in place
   * before the run, as a rule someone else put on the load balancer would be): a lift can take those off too.
   */
  async list(): Promise<Restriction[]> {
    const scenario = this.fleet.typeNames
      .filter((type) => !this.rules.has(type) && this.fleet.restrictedPercent(type) > 0)
      .map((type): Restriction => ({
        type,
        paths: [],
        headers: {},
        retryAfterSeconds: this.fleet.restrictionRetryAfter(type),
        ...(this.fleet.restrictedPercent(type) < 100 ? {share: this.fleet.restrictedPercent(type)} : {}),
      }))
    return [...this.rules.values(), ...scenario]
  }

  async add(restriction: Restriction): Promise<void> {
    this.fleet.setRestricted(restriction.type, restriction.share ?? 100, restriction.retryAfterSeconds)
    this.rules.set(restriction.type, restriction)
  }

  async remove(type: string): Promise<boolean> {
    if (!this.rules.has(type) && !(this.fleet.typeNames.includes(type) && this.fleet.restrictedPercent(type) > 0)) return false
    this.fleet.setRestricted(type, 0)
    this.rules.delete(type)
    return true
  }
}
