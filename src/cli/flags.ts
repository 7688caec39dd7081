import {Flags} from '@oclif/core'
import {InputError} from '../errors.js'

/** A number flag whose error names the flag and shows what it got. */
export function numberFlag(options: {description: string; helpValue?: string; integer?: boolean}) {
  return Flags.custom<number>({
    description: options.description,
    helpValue: options.helpValue ?? (options.integer ? 'INT' : 'NUMBER'),
    async parse(input, _context, opts) {
      const value = Number(input)
      if (input.trim() === '' || !Number.isFinite(value) || (options.integer && !Number.isInteger(value)))
        throw new InputError(`--${opts.name}: expected ${options.integer ? 'a whole number' : 'a number'}, got "${input}"`)
      return value
    },
  })()
}
