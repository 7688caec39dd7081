import type {AwsOptions} from '../aws/clients.js'
import {InputError} from '../errors.js'
import {LocalStore} from '../local/local-store.js'
import type {StateStore} from '../ports/state-store.js'
import {chooseState} from '../state/home.js'

/** Where state lives (src/state/home.ts): --state, $SLUICE_STATE, a config file, or the user's state directory. */
export function stateSpec(flag?: string): string {
  return chooseState(flag).spec
}

/**
 * One store per place per process: the locks this process holds (and renews) are the store's, so
 * a resume that reads a journal and then runs it holds them as one holder, not two.
 */
const opened = new Map<string, Promise<StateStore>>()

/** A local directory, or `dynamodb://TABLE` for state a team shares. */
export function openStore(flag: string | undefined, aws: AwsOptions): Promise<StateStore> {
  // A run's region may be settled later from its runbook's ARNs; the state store it shares with
  // the command that opened it first stays the same store (locks held by one are held by both).
  const spec = stateSpec(flag)
  const key = spec.startsWith('dynamodb://') ? JSON.stringify([spec, aws.profile, aws.endpoint]) : JSON.stringify([spec])
  let store = opened.get(key)
  if (!store) {
    store = open(stateSpec(flag), aws)
    opened.set(key, store)
    store.catch(() => opened.delete(key))
  }
  return store
}

async function open(spec: string, aws: AwsOptions): Promise<StateStore> {
  if (spec.startsWith('dynamodb://')) {
    const table = spec.slice('dynamodb://'.length)
    if (!/^[A-Za-z0-9_.-]{3,255}$/.test(table)) throw new InputError(`--state: expected dynamodb://TABLE with a DynamoDB table name, got "${spec}"`)
    const {DynamoStore} = await import('../aws/dynamo-store.js')
    return new DynamoStore(table, aws)
  }
  if (/^[a-z0-9]+:\/\//.test(spec)) throw new InputError(`--state: "${spec}" is not a state store sluice knows; use a directory or dynamodb://TABLE`)
  return new LocalStore(spec)
}

/** What a reader that must never write needs of a store: its runs, their journals and its locks. */
export type StoreReader = Pick<StateStore, 'label' | 'runIds' | 'read' | 'locks'>

/**
 * The state store for a reader that must never write and must answer at once (shell completion):
 * a local directory read as it is (its lock listing removes no leftovers), or null for a
 * `dynamodb://` store, whose first read creates its table and which may be a network away.
 */
export function peekStore(flag: string | undefined): StoreReader | null {
  const spec = stateSpec(flag)
  if (/^[a-z0-9]+:\/\//.test(spec)) return null
  const store = new LocalStore(spec)
  return {label: store.label, runIds: () => store.runIds(), read: (runId) => store.read(runId), locks: () => store.peekLocks()}
}
