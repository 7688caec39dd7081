import type {AwsOptions} from '../aws/clients.js'
import {LocalStore} from '../local/local-store.js'
import type {StateStore} from '../ports/state-store.js'
import {chooseState} from '../state/home.js'
import type {StateAddress} from '../state/state-address.js'

/**
 * One store per place per process: the locks this process holds (and renews) are the store's, so
 * a resume that reads a journal and then runs it holds them as one holder, not two.
 */
const opened = new Map<string, Promise<StateStore>>()

/**
 * Forgets the stores opened so far, as a new process would: each command opens its own. A process
 * runs one command, so this changes nothing there; a process that runs many (the tests' in-process
 * CLI) must not let one command's store remember what another wrote (LocalStore's journal lengths).
 */
export function forgetOpenedStores(): void {
  opened.clear()
}

/** A local directory, or `dynamodb://TABLE` or `s3://BUCKET/PREFIX` for state a team shares. */
export function openStore(flag: string | undefined, aws: AwsOptions): Promise<StateStore> {
  // A run's region may be settled later from its runbook's ARNs; the state store it shares with
  // the command that opened it first stays the same store (locks held by one are held by both).
  const {spec, address} = chooseState(flag)
  const key = address.kind === 'store' ? JSON.stringify([spec, aws.profile, aws.endpoint]) : JSON.stringify([spec])
  let store = opened.get(key)
  if (!store) {
    store = open(address, aws)
    opened.set(key, store)
    store.catch(() => opened.delete(key))
  }
  return store
}

/** The store at an address chosen and checked by src/state/home.ts: one opener per scheme it knows. */
async function open(address: StateAddress, aws: AwsOptions): Promise<StateStore> {
  if (address.kind === 'directory') return new LocalStore(address.path)
  switch (address.scheme) {
    case 'dynamodb': {
      const {DynamoStore} = await import('../aws/dynamo-store.js')
      return new DynamoStore(address.name, aws)
    }
    case 's3': {
      const {S3Store} = await import('../aws/s3-store.js')
      const [bucket, ...prefix] = address.name.split('/')
      return new S3Store(bucket, prefix.join('/'), aws)
    }
  }
}

/** What a reader that must never write needs of a store: its runs, their journals and its locks. */
export type StoreReader = Pick<StateStore, 'label' | 'runIds' | 'read' | 'locks'>

/**
 * The state store for a reader that must never write and must answer at once (shell completion):
 * a local directory read as it is (its lock listing removes no leftovers), or null for a team
 * store, which may be a network away (and a DynamoDB one creates its table on its first read).
 */
export function peekStore(flag: string | undefined): StoreReader | null {
  const {address} = chooseState(flag)
  if (address.kind !== 'directory') return null
  const store = new LocalStore(address.path)
  return {label: store.label, runIds: () => store.runIds(), read: (runId) => store.read(runId), locks: () => store.peekLocks()}
}
