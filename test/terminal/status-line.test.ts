import {describe, expect, it} from 'vitest'
import {StatusLine} from '../../src/cli/terminal/status-line.js'

function recorded(live: boolean): {status: StatusLine; out: () => string} {
  let text = ''
  return {status: new StatusLine((t) => (text += t), live), out: () => text}
}

describe('StatusLine', () => {
  it('on a terminal: redraws in place at most ten times a second unless told now, keeps lines above, clears at the end', () => {
    const {status, out} = recorded(true)
    status.show('1 of 3')
    // Within a tenth of a second of the last drawing: held back.
    status.show('2 of 3')
    status.keep('batch done')
    status.show('3 of 3', true)
    status.end()
    expect(out()).toBe('\r\x1b[K1 of 3' + '\r\x1b[Kbatch done\n' + '\r\x1b[K2 of 3' + '\r\x1b[K3 of 3' + '\r\x1b[K')
  })

  it('in a log: only the kept lines, each on its own, and nothing to clear', () => {
    const {status, out} = recorded(false)
    status.show('1 of 3', true)
    status.keep('batch done')
    status.end()
    expect(out()).toBe('batch done\n')
  })
})
