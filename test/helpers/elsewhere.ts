import {fileURLToPath} from 'node:url'

/**
 * The environment for a spawned sluice that runs as if on another host, its clock three minutes
 * behind (test/helpers/elsewhere.mjs, loaded with --import): its pid means nothing here, and its
 * timestamps are wrong, so only its lease can tell whether it lives.
 */
export const elsewhere = (env: Record<string, string>): Record<string, string> => ({
  ...env,
  NODE_OPTIONS: `--import ${fileURLToPath(new URL('elsewhere.mjs', import.meta.url))}`,
  SLUICE_TEST_HOSTNAME: 'far-away-host',
  SLUICE_TEST_SKEW_SECONDS: '-180',
})
