/**
 * Secrets in what sluice is given and what endpoints answer: an Authorization header's value from
 * the environment, a token in a URL's query string, a password in its userinfo. They are sent where
 * they are meant to go and never shown or stored: a URL is shown with them replaced by REDACTED
 * (as kubectl and Terraform show theirs), a header's value is checked before it is sent (a newline
 * in it would otherwise come back in fetch's own error, value and all), and any text an endpoint
 * answers is scrubbed of them before it reaches a message, the journal or a file.
 *
 * redactSecrets below blanks secret-looking environment variables in a hook's or an SSM
 * command's output; the same idea, for values sluice holds rather than the environment's.
 */

/** What stands in for a secret in anything shown or stored. */
export const redacted = 'REDACTED'

/**
 * A query parameter (or fragment parameter) whose name says it holds a secret: `token`,
 * `access_token`, `api_key`, `X-Amz-Signature`, `password`, `auth`, `session`… Over-matching costs a
 * value shown as REDACTED; under-matching costs a secret in the journal.
 */
export const secretName = /token|secret|passw|pwd|key|auth|sig|credential|session|cookie|jwt/i

/** `name=value` pairs in a query string or fragment, or in any text that quotes one back. */
const pair = /([?&;#]|^|[\s"'(,])([^=&;#\s"'?]+)=([^&;#\s"']*)/g

/**
 * The URL as it may be shown or stored: a password in its userinfo (or a userinfo that is all
 * token, `https://TOKEN@host`) and the value of every secret-looking query or fragment parameter
 * replaced by REDACTED; otherwise the same text, byte for byte.
 */
export function redactUrl(url: string): string {
  const withoutUser = url.replace(/^([a-z][a-z0-9+.-]*:\/\/)([^/?#@]*)@/i, (_m, scheme: string, info: string) => {
    const colon = info.indexOf(':')
    return `${scheme}${colon < 0 ? redacted : `${info.slice(0, colon)}:${redacted}`}@`
  })
  const at = withoutUser.search(/[?#]/)
  if (at < 0) return withoutUser
  return withoutUser.slice(0, at) + withoutUser.slice(at).replace(pair, redactPair)
}

/** The secret values a URL carries (its userinfo's password, secret-looking parameters' values), to scrub from what an endpoint answers. */
export function urlSecrets(url: string): string[] {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return []
  }
  const values = [parsed.password, ...[...parsed.searchParams].filter(([name]) => secretName.test(name)).map(([, value]) => value)]
  return values.filter((v) => v !== '').flatMap((v) => [v, decodeOr(v)])
}

/**
 * Text from outside (an endpoint's error, fetch's own) with every one of `secrets` blanked, in
 * the forms an echo takes (as given, percent-encoded), every secret-looking `name=value` pair's
 * value and every `Bearer …`/`Basic …` credential replaced by REDACTED. A secret under four
 * characters is blanked only in those patterns: replacing it everywhere would blank ordinary words.
 */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  const forms = [...new Set(secrets.flatMap((s) => [s, encodeURIComponent(s)]))].filter((s) => s.length >= 4)
  let out = blankValues(
    text,
    forms.map((secret) => [secret, redacted]),
  )
  // A credential after its scheme, as an echoed header has it; a word ("Bearer authentication") is left alone.
  out = out.replace(/\b(Bearer|Basic)(\s+)([A-Za-z0-9\-._~+/]{8,}=*)/gi, (m, scheme: string, space: string, credential: string) =>
    /^[a-z]+$/.test(credential) ? m : `${scheme}${space}${redacted}`,
  )
  return out.replace(pair, redactPair)
}

/**
 * `text` with every value replaced by what stands in for it, longest value first, so a value that
 * contains another is blanked whole. The one blanking loop: scrubSecrets's and the hooks' (src/local/command-hooks.ts).
 */
export function blankValues(text: string, values: ReadonlyArray<readonly [value: string, standIn: string]>): string {
  let out = text
  for (const [value, standIn] of [...values].sort(([a], [b]) => b.length - a.length)) out = out.split(value).join(standIn)
  return out
}

/**
 * What is wrong with a header value sluice was given, without quoting it: a line break (which
 * would end the header and start another), any other control character, a character outside
 * printable ASCII (fetch would refuse it, quoting the value), or nothing at all. Null: it may be sent.
 */
export function headerValueProblem(value: string): string | null {
  if (value.trim() === '') return 'is empty'
  for (let i = 0; i < value.length; i++) {
    const code = value.charCodeAt(i)
    const at = `(character ${i + 1} of ${value.length})`
    if (code === 0x0a || code === 0x0d) return `holds a line break ${at}`
    if (code < 0x20 || code === 0x7f) return `holds a control character ${at}`
    if (code > 0x7e) return `holds a character outside printable ASCII ${at}`
  }
  return null
}

/** A `name=value` pair with its value REDACTED where the name looks secret; punctuation that ends a sentence stays (`token=X: refused`). */
function redactPair(match: string, lead: string, name: string, value: string): string {
  if (value === '' || !isSecretName(name)) return match
  const tail = /[:.,)]+$/.exec(value)?.[0] ?? ''
  return `${lead}${name}=${redacted}${tail}`
}

function isSecretName(name: string): boolean {
  return secretName.test(decodeOr(name))
}

function decodeOr(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '))
  } catch {
    return text
  }
}

/** Names whose values are credentials: never printed, even when a hook prints them. */
const secretVariable = /SECRET|TOKEN|PASSWORD|PASSWD|CREDENTIAL|PRIVATE|(^|_)KEY($|_)|ACCESS_KEY|SESSION/i

/**
 * A hook's output with secrets blanked out, before it reaches an error message, and so the
 * terminal, the journal and every --json: the value of every variable the runbook hands the hook
 * (whatever its name: SLACK_WEBHOOK_URL, GITHUB_PAT, DB_PASS), and of sluice's own secret-looking
 * variables. Very short values are left alone (under 4 characters for a handed variable, 6 for
 * the others): blanking `1` or `us` everywhere would garble the message and hide nothing.
 */
export function redactSecrets(text: string, env: NodeJS.ProcessEnv = process.env, handed: readonly string[] = []): string {
  const secrets = Object.entries(env).filter(
    (entry): entry is [string, string] =>
      entry[1] !== undefined && entry[1] !== '' && (handed.includes(entry[0]) ? entry[1].length >= 4 : entry[1].length >= 6 && secretVariable.test(entry[0])),
  )
  return blankValues(
    text,
    secrets.map(([name, value]) => [value, `[${name} redacted]`]),
  )
}
