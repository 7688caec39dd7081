import {mkdirSync, writeFileSync} from 'node:fs'
import {join} from 'node:path'
import {expect} from 'vitest'
import {fileURLToPath} from 'node:url'
import {inProcess as sluice} from '../helpers/command.js'

/** Where game days leave their timelines: $SLUICE_GAMEDAY_DIR, else .gameday/ in the checkout. */
export const gamedayDir = process.env.SLUICE_GAMEDAY_DIR ?? fileURLToPath(new URL('../../.gameday', import.meta.url))

/**
 * Writes the incident's timeline, the kind that goes into a postmortem: each run's `sluice journal
 * RUN --markdown`, in the order they ran, under one title. Returns the file and its text.
 */
export async function writeTimeline(name: string, title: string, runIds: string[], env: Record<string, string>): Promise<{file: string; text: string}> {
  const parts = [`# ${title}\n`]
  for (const runId of runIds) {
    const shown = await sluice(['journal', runId, '--markdown'], {env})
    expect(shown.code, shown.stderr).toBe(0)
    parts.push(shown.stdout)
  }
  mkdirSync(gamedayDir, {recursive: true})
  const file = join(gamedayDir, `${name}.md`)
  const text = parts.join('\n')
  writeFileSync(file, text)
  return {file, text}
}
