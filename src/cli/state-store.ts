import type {AwsOptions} from '../aws/clients.js'
import type {StateStore} from '../ports/state-store.js'
import {chooseState} from '../state/home.js'
import {forgetOpenedStores, openStore} from '../wiring/state.js'

const announced = new Set<string>()

/**
 * Starts a command's stores afresh: each command opens its own and says it once. A process runs one
 * command, so this changes nothing there; a test process runs many (test/helpers/command.ts).
 */
export function storesAfresh(): void {
  announced.clear()
  forgetOpenedStores()
}

/**
 * Opens the state store a command uses and says on stderr, once per command and before anything
 * else it does, which store that is and why (under --json too: it is not the result), so nobody
 * freezes or pauses in one store and looks in another.
 */
export async function openStateStore(flag: string | undefined, aws: AwsOptions): Promise<StateStore> {
  const choice = chooseState(flag)
  const store = await openStore(flag, aws)
  if (!announced.has(store.label)) {
    announced.add(store.label)
    process.stderr.write(`using ${store.label} (${choice.from})\n`)
    for (const notice of choice.notices) process.stderr.write(`notice: ${notice}\n`)
    store.notice = (message) => void process.stderr.write(`notice: ${message}\n`)
  }
  return store
}
