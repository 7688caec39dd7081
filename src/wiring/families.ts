import {awsFamily} from '../aws/ports.js'
import type {AwsOptions} from '../aws/clients.js'
import {haproxyFamily} from '../haproxy/ports.js'
import type {BackendFamily} from '../ports/backend.js'
import {addBackendFace, backendOf, type Targets} from '../runbook/targets.js'

/**
 * The family table: each backend family's factory, by the name its face goes by, as Envoy lists
 * its extensions. The core picks a runbook's family by its face (src/runbook/targets.ts lists the
 * faces, in the same order); the wiring asks this table for what that family gives a live run,
 * and never asks which family it holds. A rehearsal needs no factory: the simulator stands in for
 * any family from its face (src/sim/adapters/control-plane.ts).
 */
export type Family = BackendFamily<Targets, AwsOptions>

let families = new Map<string, Family>([
  [haproxyFamily.face.family, haproxyFamily],
  [awsFamily.face.family, awsFamily],
])

/** The family a runbook's targets name: its face picked by the core, its factory from the table. */
export function familyOf(targets: Targets): Family {
  const name = backendOf(targets).family
  const family = families.get(name)
  if (!family) throw new Error(`the backend family ${name} has a face but no factory in src/wiring/families.ts`)
  return family
}

/** The families the table lists, by name. */
export function familyNames(): string[] {
  return [...families.keys()]
}

/**
 * Adds a family, its face and its factory together, until the returned function takes both out
 * again: how a family from outside the shipped ones (a test's in-memory one) is listed.
 */
export function addFamily<T, S>(family: BackendFamily<T, S>): () => void {
  const name = family.face.family
  if (families.has(name)) throw new Error(`a backend family named ${name} is already listed`)
  const removeFace = addBackendFace(family.face)
  // Asked first, as its face is.
  families = new Map([[name, family as unknown as Family], ...families])
  return () => {
    families.delete(name)
    removeFace()
  }
}
