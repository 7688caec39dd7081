import {chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {redactSecrets} from '../../src/input/secrets.js'
import {CommandHooks} from '../../src/local/command-hooks.js'

const dir = mkdtempSync(join(tmpdir(), 'sluice-hooks-'))
const script = (name: string, body: string) => {
  const file = join(dir, name)
  writeFileSync(file, `#!/bin/sh\n${body}\n`)
  chmodSync(file, 0o755)
  return file
}
const target = {id: '10.0.1.10:443', targetId: '10.0.1.10', ip: '10.0.1.10', port: 443, health: 'healthy' as const}

describe('restart and remediation hooks', () => {
  const hooks = new CommandHooks()

  it('gets the target as arguments and environment, with nothing passed through a shell', async () => {
    const out = join(dir, 'args.txt')
    const hook = script(
      'record.sh',
      `printf '%s|' "$@" > '${out}'; printf '%s %s %s %s' "$SLUICE_HOOK" "$SLUICE_TARGET_ID" "$SLUICE_TARGET_IP" "$SLUICE_TARGET_PORT" >> '${out}'`,
    )
    // A target id with shell syntax in it stays one harmless argument.
    await hooks.run(
      'restart',
      {with: 'command', command: [hook, '--host', '{ip}', 'x{port}y', '{id}'], timeoutSeconds: 5},
      {...target, targetId: '10.0.1.10;touch /tmp/pwned'},
    )
    expect(readFileSync(out, 'utf8')).toBe('--host|10.0.1.10|x443y|10.0.1.10;touch /tmp/pwned|restart 10.0.1.10;touch /tmp/pwned 10.0.1.10 443')
  })

  it('{id} and SLUICE_TARGET_ID are the bare target id (an instance id, as `--instance {id}` needs), never id:port; a value the target lacks is unset, never empty', async () => {
    const out = join(dir, 'instance.txt')
    const hook = script(
      'instance.sh',
      `printf '%s|' "$@" > '${out}'; printf '%s %s %s' "$SLUICE_TARGET_ID" "[\${SLUICE_TARGET_IP-unset}]" "$SLUICE_TARGET_PORT" >> '${out}'`,
    )
    await hooks.run(
      'restart',
      {with: 'command', command: [hook, '--instance', '{id}', '--port', '{port}'], timeoutSeconds: 5},
      {id: 'i-0abc123:443', targetId: 'i-0abc123', port: 443, health: 'healthy'},
    )
    expect(readFileSync(out, 'utf8')).toBe('--instance|i-0abc123|--port|443|i-0abc123 [unset] 443')
  })

  it('never runs with an empty substitution: {ip} of a target with no address fails, naming the placeholder and the target', async () => {
    const ran = join(dir, 'ran.txt')
    const hook = script('never.sh', `echo ran > '${ran}'`)
    const instance = {id: 'i-0abc123:443', targetId: 'i-0abc123', port: 443, health: 'healthy' as const}
    await expect(hooks.run('remediate', {with: 'command', command: [hook, '{ip}'], timeoutSeconds: 5}, instance)).rejects.toThrow(
      /^remediate hook .*never\.sh names \{ip\}, which i-0abc123:443 cannot give: its group gives no address for i-0abc123; the hook was not run$/,
    )
    // {port} of a target registered without one (a Lambda function), likewise.
    const fn = {id: 'arn:aws:lambda:us-east-1:1:function:f', targetId: 'arn:aws:lambda:us-east-1:1:function:f', health: 'healthy' as const}
    await expect(hooks.run('restart', {with: 'command', command: [hook, 'x{port}'], timeoutSeconds: 5}, fn)).rejects.toThrow(
      /names \{port\}, which .* is registered without a port/,
    )
    expect(existsSync(ran)).toBe(false)
    expect(await hooks.unfilled({with: 'command', command: [hook, '{ip}', '{port}'], timeoutSeconds: 5}, [instance, fn, target])).toEqual([
      {target: instance, placeholder: '{ip}', why: 'its group gives no address for i-0abc123'},
      {target: fn, placeholder: '{ip}', why: `its group gives no address for ${fn.targetId}`},
      {target: fn, placeholder: '{port}', why: `${fn.targetId} is registered without a port`},
    ])
  })

  it('{ip} of a target the group lists by id only is looked up in the address book when a hook names it, and only then', async () => {
    const out = join(dir, 'looked-up.txt')
    const hook = script('looked-up.sh', `printf '%s|%s\\n' "$*" "$SLUICE_TARGET_IP" >> '${out}'`)
    const asked: string[][] = []
    const book = {
      async lookUp(ids: string[]) {
        asked.push(ids)
        return new Map(ids.map((id) => [id, id === 'i-0gone' ? {none: 'EC2 instance i-0gone is terminated'} : {ip: '10.0.7.7'}]))
      },
    }
    const looking = new CommandHooks(book)
    const instance = {id: 'i-0abc123:443', targetId: 'i-0abc123', port: 443, health: 'healthy' as const}
    await looking.run('remediate', {with: 'command', command: [hook, '--ip', '{ip}'], timeoutSeconds: 5}, instance)
    await looking.run('restart', {with: 'command', command: [hook, '{id}'], timeoutSeconds: 5}, instance)
    // A target that has its address (an ip target) is not looked up.
    await looking.run('remediate', {with: 'command', command: [hook, '{ip}'], timeoutSeconds: 5}, target)
    expect(readFileSync(out, 'utf8')).toBe('--ip 10.0.7.7|10.0.7.7\ni-0abc123|\n10.0.1.10|10.0.1.10\n')
    expect(asked).toEqual([['i-0abc123']])
    await expect(
      looking.run(
        'remediate',
        {with: 'command', command: [hook, '{ip}'], timeoutSeconds: 5},
        {id: 'i-0gone:443', targetId: 'i-0gone', port: 443, health: 'healthy'},
      ),
    ).rejects.toThrow(/names \{ip\}, which i-0gone:443 cannot give: EC2 instance i-0gone is terminated; the hook was not run/)
  })

  it('a non-zero exit fails, naming the hook and its last line of output', async () => {
    const hook = script('fail.sh', 'echo "starting"; echo "mailbox service did not come up" >&2; exit 3')
    await expect(hooks.run('remediate', {with: 'command', command: [hook], timeoutSeconds: 5}, target)).rejects.toThrow(
      /^remediate hook .*fail\.sh exited 3: mailbox service did not come up$/,
    )
  })

  it('a hook that runs past its timeout is stopped and fails', async () => {
    const hook = script('slow.sh', 'sleep 30')
    const started = Date.now()
    await expect(hooks.run('restart', {with: 'command', command: [hook], timeoutSeconds: 0.3}, target)).rejects.toThrow(/timed out after 0\.3 s/)
    expect(Date.now() - started).toBeLessThan(10_000)
  })

  it('a command that does not exist fails clearly', async () => {
    await expect(hooks.run('restart', {with: 'command', command: [join(dir, 'missing')], timeoutSeconds: 5}, target)).rejects.toThrow(
      /could not start: .*ENOENT/,
    )
  })
})

describe('hooks and secrets', () => {
  const hooks = new CommandHooks()
  const secret = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'

  it("get only a minimal environment: sluice's AWS credentials stay with sluice unless a runbook names them", async () => {
    const out = join(dir, 'env.txt')
    const hook = script('env.sh', `printf '[%s][%s][%s]' "$AWS_SECRET_ACCESS_KEY" "$SLUICE_TARGET_ID" "$PATH" > '${out}'`)
    process.env.AWS_SECRET_ACCESS_KEY = secret
    try {
      await hooks.run('restart', {with: 'command', command: [hook], timeoutSeconds: 5}, target)
      expect(readFileSync(out, 'utf8')).toBe(`[][${target.targetId}][${process.env.PATH}]`)
      await hooks.run('restart', {with: 'command', command: [hook], timeoutSeconds: 5, env: ['AWS_SECRET_ACCESS_KEY']}, target)
      expect(readFileSync(out, 'utf8')).toBe(`[${secret}][${target.targetId}][${process.env.PATH}]`)
    } finally {
      delete process.env.AWS_SECRET_ACCESS_KEY
    }
  })

  it('a failing hook that prints a secret has it blanked in the error, which is what reaches output and the journal', async () => {
    const hook = script('leak.sh', 'echo "login failed with $AWS_SECRET_ACCESS_KEY and $SERVICE_TOKEN" >&2; exit 1')
    process.env.AWS_SECRET_ACCESS_KEY = secret
    process.env.SERVICE_TOKEN = 'tok-123456789'
    try {
      const failure = hooks.run('remediate', {with: 'command', command: [hook], timeoutSeconds: 5, env: ['AWS_SECRET_ACCESS_KEY', 'SERVICE_TOKEN']}, target)
      await expect(failure).rejects.toThrow(/exited 1: login failed with \[AWS_SECRET_ACCESS_KEY redacted\] and \[SERVICE_TOKEN redacted\]$/)
      await expect(failure).rejects.not.toThrow(secret)
    } finally {
      delete process.env.AWS_SECRET_ACCESS_KEY
      delete process.env.SERVICE_TOKEN
    }
  })

  it('keeps short values and ordinary variables as they are', () => {
    expect(redactSecrets('region us-east-1, key id AKIA', {AWS_REGION: 'us-east-1', API_KEY: 'AKIA'})).toBe('region us-east-1, key id AKIA')
    expect(redactSecrets('the password is hunter22', {DB_PASSWORD: 'hunter22'})).toBe('the password is [DB_PASSWORD redacted]')
    // A variable the runbook hands the hook is blanked whatever its name; one it does not hand, by name only.
    expect(redactSecrets('db hunter2 at hooks.example/T0', {DB_PASS: 'hunter2', SLACK_WEBHOOK_URL: 'hooks.example/T0'}, ['DB_PASS', 'SLACK_WEBHOOK_URL'])).toBe(
      'db [DB_PASS redacted] at [SLACK_WEBHOOK_URL redacted]',
    )
    expect(redactSecrets('db hunter2', {DB_PASS: 'hunter2'})).toBe('db hunter2')
  })
})
