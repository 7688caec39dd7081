import {existsSync} from 'node:fs'
import {fileURLToPath} from 'node:url'
import {describe, expect, it} from 'vitest'
import {programFile} from '../src/program-file.js'

describe('programFile', () => {
  it('finds a program under src/ beside the compiled module that starts it', () => {
    expect(programFile('drill/fleet-main.js', 'file:///opt/sluice/dist/src/program-file.js').href).toBe('file:///opt/sluice/dist/src/drill/fleet-main.js')
  })

  it("from the bundle's shared chunks or a command's entry, finds the program's own entry in the bundle", () => {
    for (const from of ['file:///opt/sluice/dist/bundle/chunks/chunk-ABC123.js', 'file:///opt/sluice/dist/bundle/commands/drill.js'])
      expect(programFile('sweep/sweep-worker.js', from).href).toBe('file:///opt/sluice/dist/bundle/src/sweep/sweep-worker.js')
  })

  it('names files the build writes, in dist/src and in dist/bundle/src (npm test builds first)', () => {
    for (const program of ['drill/fleet-main.js', 'drill/load-generator-main.js', 'sweep/sweep-worker.js']) {
      expect(existsSync(fileURLToPath(programFile(program, new URL('../dist/src/program-file.js', import.meta.url).href)))).toBe(true)
      expect(existsSync(fileURLToPath(programFile(program, new URL('../dist/bundle/chunks/x.js', import.meta.url).href)))).toBe(true)
    }
  })
})
