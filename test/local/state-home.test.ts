import {mkdirSync, mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {inProcess as sluice} from '../helpers/command.js'

/** A user with a home of their own and nothing set: no $SLUICE_STATE, no XDG directories, no AWS. */
function user() {
  const root = mkdtempSync(join(tmpdir(), 'sluice-home-'))
  const home = join(root, 'home')
  mkdirSync(home)
  const env = {
    HOME: home,
    SLUICE_STATE: undefined,
    XDG_STATE_HOME: undefined,
    XDG_CONFIG_HOME: undefined,
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_ACCESS_KEY_ID: '',
    AWS_SECRET_ACCESS_KEY: '',
  }
  const dir = (name: string) => {
    const d = join(root, name)
    mkdirSync(d, {recursive: true})
    return d
  }
  return {root, home, env, dir}
}

describe('one state home, whatever the working directory (in process)', () => {
  it('a freeze set in one directory is seen by freeze check in another; each says first which store it uses', async () => {
    const u = user()
    const frozen = await sluice(['freeze', '--reason', 'incident 42'], {env: u.env, cwd: u.dir('a')})
    expect(frozen.code, frozen.stderr).toBe(0)
    const store = join(u.home, '.local', 'state', 'sluice')
    expect(frozen.stderr.split('\n')[0]).toBe(`using local state ${store} (the user default)`)
    const check = await sluice(['freeze', 'check'], {env: u.env, cwd: u.dir('b/deeper')})
    expect(check.code, check.stderr).toBe(4)
    expect(check.stdout).toMatch(/^frozen since \S+ by \S+: incident 42/)
    expect(check.stderr.split('\n')[0]).toBe(`using local state ${store} (the user default)`)
    // $XDG_STATE_HOME moves it, as the XDG base directory spec says.
    const xdg = await sluice(['freeze', 'check'], {env: {...u.env, XDG_STATE_HOME: join(u.root, 'xdg')}, cwd: u.dir('b')})
    expect(xdg.code).toBe(0)
    expect(xdg.stderr.split('\n')[0]).toBe(`using local state ${join(u.root, 'xdg', 'sluice')} (the user default)`)
  }, 60_000)

  it("a sluice.yaml in the working tree, or the user's config file, names the store; the tree's wins; a bad one is bad input at file:line:column", async () => {
    const u = user()
    const repo = u.dir('repo')
    writeFileSync(join(repo, 'sluice.yaml'), 'state: ./shared-state\n')
    const frozen = await sluice(['freeze', '--reason', 'from the repo'], {env: u.env, cwd: u.dir('repo/services/mail')})
    expect(frozen.code, frozen.stderr).toBe(0)
    expect(frozen.stderr.split('\n')[0]).toBe(`using local state ${join(repo, 'shared-state')} (named in ${join(repo, 'sluice.yaml')})`)
    // Another user, elsewhere, with only a config file naming the same store: no flags.
    const other = user()
    mkdirSync(join(other.home, '.config', 'sluice'), {recursive: true})
    writeFileSync(join(other.home, '.config', 'sluice', 'config.yaml'), `state: ${join(repo, 'shared-state')}\n`)
    const seen = await sluice(['freeze', 'check', '--json'], {env: other.env, cwd: other.dir('anywhere')})
    expect(seen.code).toBe(4)
    expect(JSON.parse(seen.stdout)).toMatchObject({frozen: true, freeze: {reason: 'from the repo'}})
    expect(seen.stderr.split('\n')[0]).toBe(
      `using local state ${join(repo, 'shared-state')} (named in ${join(other.home, '.config', 'sluice', 'config.yaml')})`,
    )

    // In a working tree with a sluice.yaml of its own, that one wins over the user's.
    const tree = other.dir('tree')
    writeFileSync(join(tree, 'sluice.yaml'), 'state: ./tree-state\n')
    const inTree = await sluice(['freeze', 'check'], {env: other.env, cwd: tree})
    expect(inTree.code).toBe(0)
    expect(inTree.stderr.split('\n')[0]).toBe(`using local state ${join(tree, 'tree-state')} (named in ${join(tree, 'sluice.yaml')})`)

    const empty = await sluice(['freeze', 'check', '--state', ''], {env: other.env, cwd: tree})
    expect(empty.code).toBe(2)
    expect(empty.stderr).toContain('Error: --state: expected a directory or dynamodb://TABLE or s3://BUCKET/PREFIX, got an empty value')

    writeFileSync(join(other.home, '.config', 'sluice', 'config.yaml'), 'state: /tmp/x\nstat: typo\n')
    const bad = await sluice(['freeze', 'check'], {env: other.env, cwd: other.dir('anywhere')})
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain(`Error: ${join(other.home, '.config', 'sluice', 'config.yaml')}:2:1: stat: `)
  }, 60_000)

  it('state: "DYNAMODB://sluice-state" in sluice.yaml asks DynamoDB, never a directory beside it; state: dynamodb:/x is exit 2 at file:line:column', async () => {
    const u = user()
    const repo = u.dir('repo')
    writeFileSync(join(repo, 'sluice.yaml'), 'state: "DYNAMODB://sluice-state"\n')
    // An endpoint nothing listens on, and no credentials: the answer can only come from DynamoDB, and cannot.
    const env = {...u.env, AWS_ENDPOINT_URL: 'http://127.0.0.1:9', AWS_REGION: 'eu-west-1'}
    const check = await sluice(['freeze', 'check'], {env, cwd: repo})
    expect(check.stderr.split('\n')[0]).toBe(`using dynamodb://sluice-state (named in ${join(repo, 'sluice.yaml')})`)
    expect(check.code, check.stderr).toBe(1)
    expect(check.stdout).not.toContain('not frozen')
    writeFileSync(join(repo, 'sluice.yaml'), 'state: dynamodb:/sluice-state\n')
    const bad = await sluice(['freeze', 'check'], {env, cwd: repo})
    expect(bad.code).toBe(2)
    expect(bad.stdout).toBe('')
    expect(bad.stderr.trim()).toBe(
      `Error: ${join(repo, 'sluice.yaml')}:1:8: state: "dynamodb:/sluice-state" is not a dynamodb:// address: expected dynamodb://TABLE`,
    )
  }, 60_000)

  it('an old ./.sluice is still found, with a one-line notice saying how to move it', async () => {
    const u = user()
    const old = u.dir('ops')
    mkdirSync(join(old, '.sluice'))
    const frozen = await sluice(['freeze', '--reason', 'old habits'], {env: u.env, cwd: old})
    expect(frozen.code, frozen.stderr).toBe(0)
    const [first, notice] = frozen.stderr.split('\n')
    expect(first).toBe(`using local state ${join(old, '.sluice')} (an old ./.sluice in this directory)`)
    expect(notice).toMatch(/^notice: \.\/\.sluice is where an older sluice kept state; .* Move it with `mkdir -p .* && mv \.sluice .*\/\.local\/state\/sluice`/)
    // Elsewhere, the user default: the old directory's freeze is not seen there (that is why it should move).
    expect((await sluice(['freeze', 'check'], {env: u.env, cwd: u.dir('elsewhere')})).code).toBe(0)
  }, 60_000)
})
