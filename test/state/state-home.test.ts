import {existsSync, mkdirSync, mkdtempSync, readdirSync, symlinkSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {chooseState} from '../../src/state/home.js'
import {isolatedEnv} from '../helpers/cli.js'
import {sluiceInProcess, type InProcessResult} from '../helpers/command.js'

/** A user with a home of their own and nothing set: no $SLUICE_STATE, no XDG directories, no AWS credentials, an AWS endpoint nothing listens on. */
function user() {
  const root = mkdtempSync(join(tmpdir(), 'sluice-state-home-'))
  const home = join(root, 'home')
  mkdirSync(home)
  const env: Record<string, string | undefined> = {
    ...isolatedEnv('state-home'),
    AWS_ENDPOINT_URL: 'http://127.0.0.1:9',
    AWS_REGION: 'eu-west-1',
    AWS_PROFILE: undefined,
    HOME: home,
    SLUICE_STATE: undefined,
    XDG_STATE_HOME: undefined,
    XDG_CONFIG_HOME: undefined,
  }
  const dir = (name: string) => {
    const d = join(root, name)
    mkdirSync(d, {recursive: true})
    return d
  }
  return {root, home, env, dir}
}

/** `sluice ARGS` in this process, as a shell in `cwd` with `env` would run it (undefined unsets); both are put back after. */
async function sluiceIn(args: string[], env: Record<string, string | undefined>, cwd: string): Promise<InProcessResult<unknown>> {
  const saved = {...process.env}
  const savedCwd = process.cwd()
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete process.env[k]
    else process.env[k] = v
  }
  process.chdir(cwd)
  try {
    return await sluiceInProcess(args)
  } finally {
    process.chdir(savedCwd)
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k]
    Object.assign(process.env, saved)
  }
}

const firstLine = (r: InProcessResult<unknown>) => r.stderr.split('\n')[0]

/** Bad input: exit 2, the error on stderr, nothing on stdout, and no store opened (no `using …` line). */
function expectRefused(r: InProcessResult<unknown>, message: string) {
  expect(r.exit, r.stderr).toBe(2)
  expect(r.stdout).toBe('')
  expect(r.stderr).not.toContain('using ')
  expect(r.stderr).toContain(`Error: ${message}`)
}

describe('a state address is a directory or a store sluice knows, in any case and spacing, or bad input naming where it came from', () => {
  it('state: "DYNAMODB://sluice-state" in sluice.yaml is the DynamoDB store, never a directory beside the file saying "not frozen"', async () => {
    const u = user()
    const repo = u.dir('repo')
    writeFileSync(join(repo, 'sluice.yaml'), 'state: "DYNAMODB://sluice-state"\n')
    const check = await sluiceIn(['freeze', 'check'], u.env, u.dir('repo/services/mail'))
    expect(firstLine(check)).toBe(`using dynamodb://sluice-state (named in ${join(repo, 'sluice.yaml')})`)
    // With no AWS credentials, it cannot say whether the team is frozen, and says so (exit 1).
    expect(check.exit, check.stderr).toBe(1)
    expect(check.stderr).toMatch(/^Error: DynamoDB \w+ .*sluice-state.* failed: NoCredentials/m)
    expect(check.stdout).not.toContain('not frozen')
    expect(readdirSync(repo)).toEqual(['services', 'sluice.yaml'])

    // Spaces around it and any case, in the file, the variable and the flag alike.
    expect(chooseState(undefined, {SLUICE_STATE: '  DynamoDB://team-state \t'})).toMatchObject({
      spec: 'dynamodb://team-state',
      address: {kind: 'store', scheme: 'dynamodb', name: 'team-state'},
      from: '$SLUICE_STATE',
    })
    expect(chooseState(' dynamodb://Team.State_1 ', {})).toMatchObject({spec: 'dynamodb://Team.State_1', from: '--state'})
    writeFileSync(join(repo, 'sluice.yaml'), 'state: "  dynamoDB://sluice-state "\n')
    expect(chooseState(undefined, {HOME: u.home}, repo)).toMatchObject({spec: 'dynamodb://sluice-state', from: `named in ${join(repo, 'sluice.yaml')}`})
    const flagged = await sluiceIn(['freeze', 'check', '--state', ' DYNAMODB://sluice-flag-state'], u.env, u.dir('elsewhere'))
    expect(firstLine(flagged)).toBe('using dynamodb://sluice-flag-state (--state)')
    expect(flagged.exit).toBe(1)
  })

  it('a URL sluice cannot read is exit 2 naming the value, where it came from (file:line:column, --state, $SLUICE_STATE) and what is expected', async () => {
    const u = user()
    const repo = u.dir('repo')
    const cases: Array<[string, string]> = [
      ['dynamodb:/x', 'is not a dynamodb:// address: expected dynamodb://TABLE'],
      ['dynamodb:x', 'is not a dynamodb:// address: expected dynamodb://TABLE'],
      ['DynamoDB:sluice-state', 'is not a dynamodb:// address: expected dynamodb://TABLE'],
      ['s3:bucket', 'is not an s3:// address: expected s3://BUCKET/PREFIX'],
      [
        's3://Team_State',
        "does not name a store: expected s3://BUCKET/PREFIX, BUCKET an S3 bucket name (3 to 63 of a-z 0-9 . -) and PREFIX an optional key prefix (A-Z a-z 0-9 ! _ . * ' ( ) - /)",
      ],
      [
        'gs:bucket',
        'is neither a directory nor a store URL: expected a directory or dynamodb://TABLE or s3://BUCKET/PREFIX (a directory whose name has a colon is written ./gs:bucket)',
      ],
      ['foo://x', 'names a store sluice does not know (foo://): expected a directory or dynamodb://TABLE or s3://BUCKET/PREFIX'],
      ['dynamodb://', 'does not name a store: expected dynamodb://TABLE, TABLE a DynamoDB table name (3 to 255 of A-Z a-z 0-9 _ . -)'],
      ['dynamodb://sluice state', 'does not name a store: expected dynamodb://TABLE, TABLE a DynamoDB table name (3 to 255 of A-Z a-z 0-9 _ . -)'],
    ]
    for (const [value, why] of cases) {
      writeFileSync(join(repo, 'sluice.yaml'), `# the team's store\nstate: ${JSON.stringify(value)}\n`)
      expectRefused(await sluiceIn(['freeze', 'check'], u.env, repo), `${join(repo, 'sluice.yaml')}:2:8: state: ${JSON.stringify(value)} ${why}`)
      expectRefused(await sluiceIn(['freeze', 'check', '--state', value], u.env, repo), `--state: ${JSON.stringify(value)} ${why}`)
      expectRefused(await sluiceIn(['freeze', '--reason', 'x'], {...u.env, SLUICE_STATE: value}, repo), `$SLUICE_STATE: ${JSON.stringify(value)} ${why}`)
    }
    // Nothing was made of any of them: no directory named after a URL beside the file or here.
    expect(readdirSync(repo)).toEqual(['sluice.yaml'])
    expect(existsSync(join(u.home, '.local'))).toBe(false)
    // A directory whose name has a colon is still a directory, written as a path.
    expect(chooseState('./s3:bucket', {})).toMatchObject({address: {kind: 'directory', path: './s3:bucket'}})
    expect(chooseState('/srv/sluice:state', {})).toMatchObject({address: {kind: 'directory', path: '/srv/sluice:state'}})
  })

  it('~ and $VAR in a state path are expanded as a shell would, or refused: never a directory named ~ or $HOME', async () => {
    const u = user()
    const repo = u.dir('repo')
    // A store of its own for each, so each says which it uses (once per store in a process).
    for (const [value, team] of [
      ['~/team-a', join(u.home, 'team-a')],
      ['$HOME/team-b', join(u.home, 'team-b')],
      ['${HOME}/team-c', join(u.home, 'team-c')],
      [' ~/team-d ', join(u.home, 'team-d')],
    ]) {
      writeFileSync(join(repo, 'sluice.yaml'), `state: ${JSON.stringify(value)}\n`)
      const frozen = await sluiceIn(['freeze', '--reason', `via ${value}`], u.env, repo)
      expect(frozen.exit, frozen.stderr).toBe(0)
      expect(firstLine(frozen)).toBe(`using local state ${team} (named in ${join(repo, 'sluice.yaml')})`)
      const seen = await sluiceIn(['freeze', 'check', '--json'], u.env, u.dir('elsewhere'))
      // Elsewhere, with no config, the user default: not the team's directory, so not frozen there.
      expect(seen.exit).toBe(0)
      const there = await sluiceIn(['freeze', 'check', '--state', team], u.env, u.dir('elsewhere'))
      expect(there.exit).toBe(4)
      expect(there.stdout).toContain(`via ${value}`)
      expect((await sluiceIn(['unfreeze', '--state', team], u.env, repo)).exit).toBe(0)
    }
    expect(readdirSync(repo)).toEqual(['sluice.yaml'])
    // The flag and the variable too (quoted, so no shell expanded them first).
    expect(chooseState('~/x', {HOME: u.home})).toMatchObject({spec: join(u.home, 'x')})
    expect(chooseState('~', {HOME: u.home})).toMatchObject({spec: u.home})
    expect(chooseState(undefined, {HOME: u.home, SLUICE_STATE: '$HOME/x', TEAM: 'ops'})).toMatchObject({spec: join(u.home, 'x')})
    expect(chooseState('/srv/${TEAM}/state', {HOME: u.home, TEAM: 'ops'})).toMatchObject({spec: '/srv/ops/state'})

    const refused: Array<[string, string]> = [
      ['$NOPE/x', '"$NOPE/x": $NOPE is not set; set it, or write the path in full'],
      ['${EMPTY}/x', '"${EMPTY}/x": $EMPTY is empty; set it, or write the path in full'],
      ['~bob/x', '"~bob/x": sluice expands ~ and ~/ (your home directory), not ~USER; write the path in full'],
      ['/srv/$(whoami)', '"/srv/$(whoami)": a $ that names no variable; expected $NAME or ${NAME}, or the path written in full'],
      ['/srv/${1x}', '"/srv/${1x}": ${1x} is not a variable sluice expands; expected $NAME or ${NAME}, or the path written in full'],
    ]
    for (const [value, message] of refused) {
      expectRefused(await sluiceIn(['freeze', 'check', '--state', value], {...u.env, EMPTY: ''}, repo), `--state: ${message}`)
      writeFileSync(join(repo, 'sluice.yaml'), `state: ${JSON.stringify(value)}\n`)
      expectRefused(await sluiceIn(['freeze', 'check'], {...u.env, EMPTY: ''}, repo), `${join(repo, 'sluice.yaml')}:1:8: state: ${message}`)
    }
  })

  it('a relative $XDG_STATE_HOME or $XDG_CONFIG_HOME is ignored, as the XDG spec says, and the state line says so', async () => {
    const u = user()
    const work = u.dir('work')
    const state = await sluiceIn(['freeze', '--reason', 'xdg'], {...u.env, XDG_STATE_HOME: 'rel-state'}, work)
    expect(state.exit, state.stderr).toBe(0)
    const userDefault = join(u.home, '.local', 'state', 'sluice')
    expect(state.stderr.split('\n').slice(0, 2)).toEqual([
      `using local state ${userDefault} (the user default)`,
      `notice: $XDG_STATE_HOME is "rel-state", a relative path, which the XDG Base Directory spec says to ignore: using ${join(u.home, '.local', 'state')} instead`,
    ])
    expect(readdirSync(work)).toEqual([])

    // The user's config file under ~/.config names the store; a relative $XDG_CONFIG_HOME does not hide it.
    mkdirSync(join(u.home, '.config', 'sluice'), {recursive: true})
    writeFileSync(join(u.home, '.config', 'sluice', 'config.yaml'), `state: ${join(u.root, 'team')}\n`)
    const config = await sluiceIn(['freeze', 'check'], {...u.env, XDG_CONFIG_HOME: '.'}, work)
    expect(config.exit, config.stderr).toBe(0)
    expect(config.stderr.split('\n').slice(0, 2)).toEqual([
      `using local state ${join(u.root, 'team')} (named in ${join(u.home, '.config', 'sluice', 'config.yaml')})`,
      `notice: $XDG_CONFIG_HOME is ".", a relative path, which the XDG Base Directory spec says to ignore: using ${join(u.home, '.config')} instead`,
    ])
  })

  it('an empty or relative $HOME is refused where the home is needed, not followed into the working directory', async () => {
    const u = user()
    const work = u.dir('work')
    const fix = 'set HOME to your home directory, or name the state with --state or $SLUICE_STATE (a directory or dynamodb://TABLE or s3://BUCKET/PREFIX)'
    expectRefused(
      await sluiceIn(['freeze', '--reason', 'x'], {...u.env, HOME: ''}, work),
      `$HOME is empty, so sluice has no home directory to find its config file in (~/.config/sluice/config.yaml); ${fix}`,
    )
    expectRefused(
      await sluiceIn(['freeze', 'check'], {...u.env, HOME: 'home', XDG_CONFIG_HOME: join(u.root, 'config')}, work),
      `$HOME is "home", not an absolute path, so sluice has no home directory to keep state in (~/.local/state/sluice); ${fix}`,
    )
    expectRefused(
      await sluiceIn(['freeze', 'check', '--state', '~/x'], {...u.env, HOME: ''}, work),
      `$HOME is empty, so sluice has no home directory for the ~ in --state; ${fix}`,
    )
    expect(readdirSync(work)).toEqual([])
    // Where the home is not needed, it is not asked for.
    const named = await sluiceIn(['freeze', 'check', '--state', join(u.root, 'state')], {...u.env, HOME: ''}, work)
    expect(named.exit, named.stderr).toBe(0)
    const xdg = await sluiceIn(['freeze', 'check'], {...u.env, HOME: '', XDG_CONFIG_HOME: join(u.root, 'c'), XDG_STATE_HOME: join(u.root, 's')}, work)
    expect(firstLine(xdg)).toBe(`using local state ${join(u.root, 's', 'sluice')} (the user default)`)
  })

  it('a config file that is a dangling or looping link, or a directory, is an error naming it, not skipped', async () => {
    const u = user()
    const repo = u.dir('repo')
    const file = join(repo, 'sluice.yaml')
    const fix = "fix or remove it (sluice does not skip a config file: it may name the team's store)"
    symlinkSync(join(u.root, 'ops', 'sluice.yaml'), file)
    expectRefused(
      await sluiceIn(['freeze', 'check'], u.env, repo),
      `${file}:1:1: cannot read this sluice config file: a symbolic link to ${join(u.root, 'ops', 'sluice.yaml')}, which does not exist; ${fix}`,
    )
    // Found from below too: the walk up does not step past it to the user's default.
    expectRefused(
      await sluiceIn(['freeze', 'check'], u.env, u.dir('repo/services/mail')),
      `${file}:1:1: cannot read this sluice config file: a symbolic link to`,
    )

    const loop = join(u.dir('loop'), 'sluice.yaml')
    symlinkSync(loop, loop)
    expectRefused(
      await sluiceIn(['freeze', 'check'], u.env, u.dir('loop')),
      `${loop}:1:1: cannot read this sluice config file: a symbolic link that loops (to ${loop}); ${fix}`,
    )

    const userConfig = join(u.home, '.config', 'sluice', 'config.yaml')
    mkdirSync(join(u.home, '.config', 'sluice'), {recursive: true})
    symlinkSync('config.yaml', userConfig)
    expectRefused(
      await sluiceIn(['freeze', 'check'], u.env, u.dir('anywhere')),
      `${userConfig}:1:1: cannot read this sluice config file: a symbolic link that loops`,
    )
  })
})
