import {InputError} from '../errors.js'

/** What an environment variable of seconds means, and what it may be. */
export interface SecondsSetting {
  /** The variable's name, without the `$`. */
  name: string
  /** What it sets, in words, for the error: `a lock's lease`. */
  what: string
  /** When it is unset or empty. */
  fallback: number
  min: number
  max: number
}

/**
 * A length of time an operator (or a test) sets in the environment, such as `$SLUICE_LEASE_SECONDS`.
 * Unset or empty is the default, as a shell's `NAME= sluice …` means it; anything else must be a
 * number of seconds in range, or the command stops before it does anything, with exit 2 naming
 * the variable: a typo must not silently give a run the default, nor a lease of 0.
 */
export function envSeconds(setting: SecondsSetting, env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[setting.name]
  if (raw === undefined || raw === '') return setting.fallback
  const seconds = raw.trim() === '' ? Number.NaN : Number(raw)
  if (!Number.isFinite(seconds) || seconds < setting.min || seconds > setting.max)
    throw new InputError(
      `$${setting.name} (${setting.what}): expected seconds from ${setting.min} to ${setting.max} (unset: ${setting.fallback}), got ${JSON.stringify(raw)}`,
    )
  return seconds
}
