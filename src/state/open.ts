import type {AwsOptions} from '../aws/clients.js'
import {InputError} from '../errors.js'
import {LocalStore} from '../local/local-store.js'
import type {StateStore} from '../ports/state-store.js'

/** Where state lives: --state, then $SLUICE_STATE, then ./.sluice. */
export function stateSpec(flag?: string): string {
  return flag ?? process.env.SLUICE_STATE ?? '.sluice'
}

/** A local directory, or `dynamodb://TABLE` for state a team shares. */
export async function openStore(flag: string | undefined, aws: AwsOptions): Promise<StateStore> {
  const spec = stateSpec(flag)
  if (spec.startsWith('dynamodb://')) {
    const table = spec.slice('dynamodb://'.length)
    if (!/^[A-Za-z0-9_.-]{3,255}$/.test(table)) throw new InputError(`--state: expected dynamodb://TABLE with a DynamoDB table name, got "${spec}"`)
    const {DynamoStore} = await import('../aws/dynamo-store.js')
    return new DynamoStore(table, aws)
  }
  if (/^[a-z0-9]+:\/\//.test(spec)) throw new InputError(`--state: "${spec}" is not a state store sluice knows; use a directory or dynamodb://TABLE`)
  return new LocalStore(spec)
}
