import {awsBackend} from '../aws/backend.js'
import {haproxyBackend} from '../haproxy/backend.js'
import type {Backend} from '../ports/backend.js'
import type {TargetsData} from './schema.js'

// What a runbook's targets block means, read one way by the loader, the actions' plans, locks and
// IAM, preflight, the live wiring and the rehearsal: its backend, AWS (dns, targetGroups,
// listener) or one HAProxy (targets.haproxy), each providing weights, pools and restrictions
// under its own names.

export type Targets = TargetsData
export type HaproxyTargetsData = NonNullable<Targets['haproxy']>

const backends = new WeakMap<Targets, Backend>()

/** The backend a runbook's targets name: one HAProxy when targets.haproxy is there, else AWS. */
export function backendOf(targets: Targets): Backend {
  let backend = backends.get(targets)
  if (!backend) {
    backend = targets.haproxy ? haproxyBackend({...targets, haproxy: targets.haproxy}) : awsBackend(targets)
    backends.set(targets, backend)
  }
  return backend
}
