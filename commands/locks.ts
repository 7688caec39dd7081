import {SluiceCommand} from '../src/cli/base.js'
import {awsFlags, awsOptionsOf, stateFlags} from '../src/cli/flags.js'
import type {LockRecord} from '../src/ports/state-store.js'
import {openStateStore} from '../src/cli/state-store.js'
import {locksTable} from '../src/report/locks.js'

export default class Locks extends SluiceCommand {
  static override summary = "List the locks in the state store, with each lock's id for --break-lock."

  static override description = `Each lock is a lease its holder renews while it runs (every lease / 3 seconds; lease 30 s, or $SLUICE_LEASE_SECONDS). For each lock: the resource, the holder (run id, operator, host, pid), since when, its last heartbeat by the holder's own clock, its lease, and its lock id. A lock whose holder died is taken by the next run of that run (a resume): at once when the holder ran on this host and its pid is gone, else once a whole lease passes with no renewal; \`--break-lock LOCK_ID\` breaks one on purpose, and is refused while its holder is alive.`

  static override examples = ['<%= config.bin %> <%= command.id %>', '<%= config.bin %> <%= command.id %> --state dynamodb://sluice-state --json']

  static override flags = {...stateFlags, ...awsFlags}

  async run(): Promise<{locks: LockRecord[]}> {
    const {flags} = await this.parse(Locks)
    const store = await openStateStore(flags.state, awsOptionsOf(flags))
    const locks = await store.locks()
    this.log(locks.length === 0 ? `no locks in ${store.label}` : locksTable(locks, this.width))
    return {locks}
  }
}
