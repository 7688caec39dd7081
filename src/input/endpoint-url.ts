import {InputError} from '../errors.js'

// Read by --endpoint-url's parse, by every AWS client's settings (src/aws/clients.ts) and by the
// confirmation that names the endpoint (src/live/preflight.ts), so all three judge alike.

/** The SDK's endpoint variables: AWS_ENDPOINT_URL, and one per service (AWS_ENDPOINT_URL_ROUTE_53, …). */
export const endpointVariable = /^AWS_ENDPOINT_URL(_[A-Z0-9_]+)?$/

/**
 * Why an AWS endpoint URL is refused, or null when sluice sends calls to it as it is. A user
 * name, a password, a query or a fragment is refused: AWS calls are signed with the credential chain's keys,
 * so whatever is there is a secret that would only reach the confirmation and the journal, where
 * the endpoint is named. The refusal names `from` (the flag or variable) and shows the URL without
 * them.
 */
export function endpointProblem(url: string, from: string): InputError | null {
  let parsed: URL | null
  try {
    parsed = new URL(url)
  } catch {
    parsed = null
  }
  if (parsed === null || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:'))
    // A value that might hold a secret is not echoed, even when it is not a URL.
    return new InputError(`${from}: expected an http(s) URL such as http://localhost:4566${/[@?#]/.test(url) ? '' : ` but received: ${url}`}`)
  const userinfo = parsed.username !== '' || parsed.password !== ''
  if (!userinfo && parsed.search === '' && parsed.hash === '') return null
  const shown = `${parsed.protocol}//${parsed.host}${parsed.pathname === '/' ? '' : parsed.pathname}`
  const what = [userinfo ? 'a user name or password' : '', parsed.search ? 'a query' : '', parsed.hash ? 'a fragment' : ''].filter(Boolean).join(' and ')
  return new InputError(
    `${from}: the endpoint ${shown} carries ${what} (left out here); sluice refuses it, as it would be shown in the confirmation and written into the journal. ` +
      `AWS calls are signed with the credentials of --profile or the credential chain, never the URL's: give the endpoint as ${shown}`,
  )
}

/**
 * Every endpoint the SDK would send calls to, checked before the first call: --endpoint-url, and
 * the AWS_ENDPOINT_URL and AWS_ENDPOINT_URL_* variables it honours by itself (unless
 * AWS_IGNORE_CONFIGURED_ENDPOINT_URLS says to ignore them).
 */
export function checkEndpoints(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): void {
  const given: Array<[string, string]> = flag ? [['--endpoint-url', flag]] : []
  if (env.AWS_IGNORE_CONFIGURED_ENDPOINT_URLS !== 'true')
    for (const [name, value] of Object.entries(env).sort(([a], [b]) => a.localeCompare(b))) if (value && endpointVariable.test(name)) given.push([name, value])
  for (const [from, url] of given) {
    const problem = endpointProblem(url, from)
    if (problem) throw problem
  }
}
