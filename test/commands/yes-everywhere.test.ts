import {readFileSync} from 'node:fs'
import {join} from 'node:path'
import {describe, expect, it} from 'vitest'
import {leaveLiveStateAlone} from '../../src/cli/not-found.js'
import {root} from '../helpers/command.js'

const manifest = JSON.parse(readFileSync(join(root, 'oclif.manifest.json'), 'utf8')) as {commands: Record<string, {flags: Record<string, unknown>}>}

describe('--yes, for scripts that pass it everywhere', () => {
  it('every command that can change something takes --yes (a no-op where it asks nothing)', () => {
    const changing = Object.keys(manifest.commands).filter((id) => !leaveLiveStateAlone.has(id))
    expect(changing).toEqual(
      expect.arrayContaining(['run', 'resume', 'rollback', 'freeze', 'unfreeze', 'pause', 'promote', 'abort', 'ramp', 'cycle', 'restrict', 'lift']),
    )
    const without = changing.filter((id) => !('yes' in manifest.commands[id].flags))
    expect(without).toEqual([])
  })

  it('every command the did-you-mean guard lets run after one yes exists', () => {
    for (const id of leaveLiveStateAlone) if (id !== 'help' && id !== 'autocomplete') expect(Object.keys(manifest.commands)).toContain(id)
  })
})
