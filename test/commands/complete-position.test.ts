import {readFileSync} from 'node:fs'
import {describe, expect, it} from 'vitest'
import {positionOf, type CommandShape} from '../../src/cli/completion.js'
import {repoRoot} from '../helpers/docs.js'

// The built manifest: the commands, args and flags as oclif (and so `sluice complete`) sees them.
const manifest = JSON.parse(readFileSync(`${repoRoot}oclif.manifest.json`, 'utf8')) as {commands: Record<string, CommandShape>}
const find = (id: string) => manifest.commands[id]
const at = (line: string) => {
  const p = positionOf(line.split(' '), find)
  return p && {kind: p.kind, typed: p.typed, flags: p.flags, args: p.args}
}

describe('positionOf: which value the word under the cursor is', () => {
  it('arguments by their name: a runbook, a run, drill’s target; past the last one, nothing (validate takes more runbooks)', () => {
    expect(at('run out')).toMatchObject({kind: 'runbook', typed: 'out'})
    expect(at('run --dry-run -y --scenario relapse out')).toMatchObject({kind: 'runbook', typed: 'out', flags: {scenario: 'relapse'}})
    expect(at('run x ')).toBeNull()
    expect(at('validate a.yaml b.yaml ')).toMatchObject({kind: 'runbook', args: ['a.yaml', 'b.yaml']})
    expect(at('watch ')).toMatchObject({kind: 'run'})
    expect(at('journal 2026')).toMatchObject({kind: 'run', typed: '2026'})
    expect(at('drill ')).toMatchObject({kind: 'runbook-or-scenario'})
  })

  it('flag values: --run, --scenario (-s, --scenario=), --setup, fixed options; a flag or a command name is left to the static script', () => {
    expect(at('status --run ')).toMatchObject({kind: 'run'})
    expect(at('status --state /tmp/s --run 2')).toMatchObject({kind: 'run', typed: '2', flags: {state: '/tmp/s'}})
    expect(at('simulate -s ')).toMatchObject({kind: 'scenario'})
    expect(at('simulate --scenario=out')).toMatchObject({kind: 'scenario', typed: 'out'})
    expect(at('simulate --scenario = out')).toMatchObject({kind: 'scenario', typed: 'out'})
    expect(at('run x --setup ')).toMatchObject({kind: 'setup', args: ['x']})
    expect(at('run x --rollback ')).toMatchObject({kind: {options: ['ramped', 'now']}})
    expect(at('freeze --reason ')).toBeNull()
    expect(at('run --dr')).toBeNull()
    expect(at('ru')).toBeNull()
    expect(at('freeze ')).toBeNull()
    expect(at('run -sout')).toBeNull()
  })

  it('after --, every word is an argument', () => {
    expect(at('validate -- --odd')).toMatchObject({kind: 'runbook', typed: '--odd'})
  })
})
