import {awsFace} from '../aws/backend.js'
import {haproxyFace} from '../haproxy/backend.js'
import type {Backend, BackendFace} from '../ports/backend.js'
import type {TargetsData} from './schema.js'

// What a runbook's targets block means, read one way by the loader, the actions' plans, locks and
// IAM, preflight, the live wiring and the rehearsal: its backend, the face of the one family its
// targets name (src/ports/backend.ts), each providing weights, pools and restrictions under its
// own names.

export type Targets = TargetsData
export type HaproxyTargetsData = NonNullable<Targets['haproxy']>

/**
 * The families a runbook's targets can name, asked in this order; the first that is named is the
 * runbook's. Targets that name none (a runbook that only freezes) are AWS's, as they always were.
 * A family named beside another is refused by the face that is picked (one runbook drives one
 * control plane). src/wiring/families.ts lists each family's factory, in the same order.
 */
const faces: Array<BackendFace<Targets>> = [haproxyFace, awsFace]
const unnamed: BackendFace<Targets> = awsFace

let backends = new WeakMap<Targets, Backend>()

/** The backend a runbook's targets name. */
export function backendOf(targets: Targets): Backend {
  let backend = backends.get(targets)
  if (!backend) {
    backend = (faces.find((face) => face.names(targets)) ?? unnamed).backend(targets)
    backends.set(targets, backend)
  }
  return backend
}

/** The families' names, in the order they are asked. */
export function backendFamilies(): string[] {
  return faces.map((face) => face.family)
}

/**
 * Adds a family's face, asked before the built-in ones, until the returned function takes it out
 * again. A family is added through src/wiring/families.ts, which adds its factory with it.
 */
export function addBackendFace<T>(face: BackendFace<T>): () => void {
  if (faces.some((f) => f.family === face.family)) throw new Error(`a backend family named ${face.family} is already listed`)
  const added = face as unknown as BackendFace<Targets>
  faces.unshift(added)
  backends = new WeakMap()
  return () => {
    const at = faces.indexOf(added)
    if (at >= 0) faces.splice(at, 1)
    backends = new WeakMap()
  }
}
