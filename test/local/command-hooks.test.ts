import {chmodSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {CommandHooks} from '../../src/local/command-hooks.js'

const dir = mkdtempSync(join(tmpdir(), 'sluice-hooks-'))
const script = (name: string, body: string) => {
  const file = join(dir, name)
  writeFileSync(file, `#!/bin/sh\n${body}\n`)
  chmodSync(file, 0o755)
  return file
}
const target = {id: '10.0.1.10:443', ip: '10.0.1.10', port: 443, health: 'healthy' as const}

describe('restart and remediation hooks', () => {
  const hooks = new CommandHooks()

  it('gets the target as arguments and environment, with nothing passed through a shell', async () => {
    const out = join(dir, 'args.txt')
    const hook = script('record.sh', `printf '%s|' "$@" > '${out}'; printf '%s %s %s %s' "$SLUICE_HOOK" "$SLUICE_TARGET_ID" "$SLUICE_TARGET_IP" "$SLUICE_TARGET_PORT" >> '${out}'`)
    // A target id with shell syntax in it stays one harmless argument.
    await hooks.run('restart', {command: [hook, '--host', '{ip}', 'x{port}y', '{id}'], timeoutSeconds: 5}, {...target, id: '10.0.1.10:443;touch /tmp/pwned'})
    expect(readFileSync(out, 'utf8')).toBe('--host|10.0.1.10|x443y|10.0.1.10:443;touch /tmp/pwned|restart 10.0.1.10:443;touch /tmp/pwned 10.0.1.10 443')
  })

  it('a non-zero exit fails, naming the hook and its last line of output', async () => {
    const hook = script('fail.sh', 'echo "starting"; echo "mailbox service did not come up" >&2; exit 3')
    await expect(hooks.run('remediate', {command: [hook], timeoutSeconds: 5}, target)).rejects.toThrow(/^remediate hook .*fail\.sh exited 3: mailbox service did not come up$/)
  })

  it('a hook that runs past its timeout is stopped and fails', async () => {
    const hook = script('slow.sh', 'sleep 30')
    const started = Date.now()
    await expect(hooks.run('restart', {command: [hook], timeoutSeconds: 0.3}, target)).rejects.toThrow(/timed out after 0\.3 s/)
    expect(Date.now() - started).toBeLessThan(10_000)
  })

  it('a command that does not exist fails clearly', async () => {
    await expect(hooks.run('restart', {command: [join(dir, 'missing')], timeoutSeconds: 5}, target)).rejects.toThrow(/could not start: .*ENOENT/)
  })
})
