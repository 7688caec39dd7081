/**
 * Relations between flags, declared once with oclif's own fields (dependsOn, exclusive,
 * exactlyOne, and a `some` relationship), so oclif checks them while it parses, each with why it
 * holds. oclif's refusal names the flags only, echoes a flag's value ("--a=VALUE cannot also be
 * provided when using --b") and puts every broken relation in one wrapped message; the base
 * command words it again from the same declarations (relationProblems), one line per broken
 * rule, naming the flags and why. Help says each relation beside its flag: related() adds it to
 * the flag's description, which help and the manifest carry as they are.
 */

/** The flags of a relation, and why it holds: a clause said after the flags when it is broken. */
export interface Relation {
  flags: string[]
  why: string
}

/** A flag's relations, by oclif's names for them. */
export interface Relations {
  /** Given, this flag needs every one of these too. */
  dependsOn?: Relation
  /** Given, this flag refuses each of these. */
  exclusive?: Relation
  /** Exactly one of these flags (this one among them) must be given. */
  exactlyOne?: Relation
  /** Given, this flag needs at least one of these. */
  some?: Relation
}

type Kind = keyof Relations

/** A flag as oclif parses it, with what related() declared on it. */
interface Declared {
  required?: boolean
  dependsOn?: string[]
  exclusive?: string[]
  exactlyOne?: string[]
  combinable?: string[]
  atLeastOne?: string[]
  relationships?: Array<{type: string; flags: Array<string | {name: string}>}>
  /** Why each relation holds, by kind: only related() writes it. */
  whyRelated?: Partial<Record<Kind, string>>
}

/** A flag with these relations, declared where oclif checks them, their reasons, and a note for help. */
export function related<F extends {description?: string}>(flag: F, relations: Relations): F {
  const declared = flag as F & Declared
  for (const kind of Object.keys(relations) as Kind[])
    if (declared.whyRelated?.[kind]) throw new Error(`related(): this flag already has a ${kind} relation; declare all of it at once`)
  const why = Object.fromEntries(Object.entries(relations).map(([kind, relation]: [string, Relation]) => [kind, relation.why]))
  return {
    ...flag,
    description: [flag.description, helpNote(relations)].filter(Boolean).join(' '),
    ...(relations.dependsOn ? {dependsOn: relations.dependsOn.flags} : {}),
    ...(relations.exclusive ? {exclusive: relations.exclusive.flags} : {}),
    ...(relations.exactlyOne ? {exactlyOne: relations.exactlyOne.flags} : {}),
    ...(relations.some ? {relationships: [{type: 'some', flags: relations.some.flags}]} : {}),
    whyRelated: {...declared.whyRelated, ...why},
  }
}

/** What help says of a flag's relations, after its description. */
function helpNote(relations: Relations): string {
  return [
    relations.dependsOn && `Needs ${list(relations.dependsOn.flags, 'and')}.`,
    relations.exclusive && `Not with ${list(relations.exclusive.flags, 'or')}.`,
    relations.exactlyOne && `Exactly one of ${list(relations.exactlyOne.flags, 'or')} is needed.`,
    relations.some && `Needs ${list(relations.some.flags, 'or')}.`,
  ]
    .filter(Boolean)
    .join(' ')
}

/** `--a`, `--a and --b`, `--a, --b and --c`. */
function list(flags: readonly string[], conjunction: 'and' | 'or'): string {
  const named = flags.map((f) => `--${f}`)
  return named.length < 2 ? named.join('') : `${named.slice(0, -1).join(', ')} ${conjunction} ${named.at(-1)}`
}

/** What oclif's parse errors carry: the flags as declared, and as given. */
interface ParseFailure {
  parse?: {
    input?: {flags?: Record<string, Declared>}
    output?: {flags?: Record<string, unknown>; metadata?: {flags?: Record<string, {setFromDefault?: boolean}>}}
  }
}

/**
 * The lines a flag-validation failure of oclif's is said in, from the declarations it checked:
 * undefined for any other error, or one this cannot word (a relation kind sluice does not
 * declare), which then keeps oclif's own message.
 */
export function relationProblems(error: Error): string[] | undefined {
  // oclif's FailedFlagValidationError is not exported; this is how its message begins.
  if (!/^The following errors? occurred:/.test(error.message)) return undefined
  const parse = (error as Error & ParseFailure).parse
  const declared = parse?.input?.flags
  const values = parse?.output?.flags
  if (!declared || !values) return undefined
  const undeclared = Object.values(declared).some(
    (f) => f.combinable || f.atLeastOne || f.relationships?.some((r) => r.type !== 'some') || (hasRelation(f) && !f.whyRelated),
  )
  if (undeclared) return undefined
  const lines = brokenRules(
    declared,
    (name) => values[name] !== undefined,
    (name) => parse.output?.metadata?.flags?.[name]?.setFromDefault === true,
  )
  return lines.length > 0 ? lines : undefined
}

function hasRelation(flag: Declared): boolean {
  return Boolean(flag.dependsOn || flag.exclusive || flag.exactlyOne || flag.relationships)
}

/**
 * Every rule the given flags break, as oclif judges them (src: @oclif/core parser/validate.js),
 * one line each: a rule broken by several flags at once is said once, naming them.
 */
function brokenRules(declared: Record<string, Declared>, given: (name: string) => boolean, defaulted: (name: string) => boolean): string[] {
  const why = (name: string, kind: Kind) => declared[name]?.whyRelated?.[kind]
  const said = (line: string, reason: string | undefined) => (reason ? `${line}; ${reason}` : line)
  const required: string[] = []
  const clashes = new Map<string, {flag: string; others: string[]; why?: string}>()
  const clashed = new Set<string>()
  const needs = new Map<string, {flags: string[]; missing: string[]; why?: string}>()
  const someOf = new Map<string, {flag: string; alternatives: string[]; why?: string}>()
  const missing = new Map<string, {alternatives: string[]; why?: string}>()
  /** A flag with the partners it goes with: `--haproxy and --backend`. */
  const withPartners = (name: string) => list([name, ...(declared[name]?.dependsOn ?? [])], 'and')
  /** Alternatives, each with its partners: `--a and --b, --c and --d, or --e`. */
  const alternatives = (names: string[]) =>
    names.length < 2
      ? names.map(withPartners).join('')
      : `${names.slice(0, -1).map(withPartners).join(', ')}${names.length > 2 ? ',' : ''} or ${withPartners(names.at(-1)!)}`

  /** Flags given together that must not be: one line per reason, naming the first flag and all it clashes with. */
  const clash = (name: string, others: string[], kind: Kind) => {
    const fresh = others.filter((other) => !clashed.has([name, other].sort().join(' ')))
    if (fresh.length === 0) return
    for (const other of fresh) clashed.add([name, other].sort().join(' '))
    const reason = why(name, kind)
    const key = reason ?? `${name} ${kind}`
    if (!clashes.has(key)) clashes.set(key, {flag: name, others: fresh, why: reason})
  }

  const flags = Object.entries(declared)
  /** Whether a flag given goes with one of these (--backend given, --haproxy not): its own line says what it needs. */
  const halfGiven = (alternatives: string[]) =>
    flags.some(([name, flag]) => given(name) && (flag.dependsOn ?? []).some((other) => alternatives.includes(other)))
  // Exclusions first: where a pair is also two of exactly one, the exclusion says it more closely.
  for (const [name, flag] of flags)
    if (given(name) && !defaulted(name))
      clash(
        name,
        (flag.exclusive ?? []).filter((other) => given(other) && !defaulted(other)),
        'exclusive',
      )
  for (const [name, flag] of flags)
    if (given(name))
      clash(
        name,
        (flag.exactlyOne ?? []).filter((other) => other !== name && given(other)),
        'exactlyOne',
      )
  for (const [name, flag] of flags) {
    if (!given(name)) {
      if (flag.required) required.push(`--${name}: missing; this flag is required`)
      else if (flag.exactlyOne && flag.exactlyOne.length > 0 && !flag.exactlyOne.some(given) && !halfGiven(flag.exactlyOne)) {
        const key = [...flag.exactlyOne].sort().join(' ')
        if (!missing.has(key)) missing.set(key, {alternatives: flag.exactlyOne, why: why(name, 'exactlyOne')})
      }
      continue
    }
    const absent = (flag.dependsOn ?? []).filter((other) => !given(other))
    if (absent.length > 0) {
      const reason = why(name, 'dependsOn')
      const key = `${reason}\n${absent.join(' ')}`
      const entry = needs.get(key) ?? {flags: [], missing: absent, why: reason}
      entry.flags.push(name)
      needs.set(key, entry)
    }
    for (const relationship of flag.relationships ?? []) {
      const names = relationship.flags.map((f) => (typeof f === 'string' ? f : f.name))
      if (relationship.type === 'some' && !names.some(given)) someOf.set(name, {flag: name, alternatives: names, why: why(name, 'some')})
    }
  }
  return [
    ...required,
    ...[...clashes.values()].map((c) => said(`--${c.flag}: not with ${list(c.others, 'or')}`, c.why)),
    ...[...needs.values()].map((n) =>
      said(`${n.flags.map((f) => `--${f}`).join(', ')}: ${n.flags.length === 1 ? 'needs' : 'need'} ${list(n.missing, 'and')}`, n.why),
    ),
    ...[...someOf.values()].map((s) => said(`--${s.flag}: needs ${alternatives(s.alternatives)}`, s.why)),
    ...[...missing.values()].map((m) => said(`missing one of ${alternatives(m.alternatives)}`, m.why)),
  ]
}
