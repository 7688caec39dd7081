import {SluiceCommand} from '../../src/cli/base.js'
import {awsFlags, awsOptionsOf, stateFlags} from '../../src/cli/flags.js'
import type {FreezeRecord} from '../../src/ports/control-plane.js'
import {openStateStore} from '../../src/cli/state-store.js'

export default class FreezeCheck extends SluiceCommand {
  static override summary = 'Exit 0 when changes are not frozen, 4 when they are: for deploy pipelines.'

  static override description = `A deploy pipeline calls this before it deploys. It prints who froze changes, why and since when, and exits 4; or exits 0 when there is no freeze (or it has expired). With --json it prints {frozen, freeze}.`

  static override examples = [
    '<%= config.bin %> <%= command.id %> || { echo "changes are frozen"; exit 1; }',
    '<%= config.bin %> <%= command.id %> --state dynamodb://sluice-state --json',
  ]

  static override flags = {...stateFlags, ...awsFlags}

  async run(): Promise<{frozen: boolean; freeze: FreezeRecord | null}> {
    const {flags} = await this.parse(FreezeCheck)
    const store = await openStateStore(flags.state, awsOptionsOf(flags))
    const freeze = await store.freeze.get()
    if (freeze) {
      this.log(`frozen since ${freeze.since} by ${freeze.by}: ${freeze.reason}${freeze.expires ? ` (until ${freeze.expires})` : ''}`)
      this.endWith('refused')
    } else {
      this.log('not frozen')
    }
    return {frozen: freeze !== null, freeze}
  }
}
