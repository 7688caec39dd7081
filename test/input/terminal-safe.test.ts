import {describe, expect, it} from 'vitest'
import {escapeControls, parseJsonSafely} from '../../src/input/terminal-safe.js'

describe('text from outside is made terminal-safe', () => {
  it('writes out every control character but tab and newline, C1 controls and DEL included', () => {
    expect(escapeControls('root\u001b[2J\u001b]0;pwned\u0007 ok')).toBe('root\\x1b[2J\\x1b]0;pwned\\x07 ok')
    expect(escapeControls('a\rb\u007fc\u009bd')).toBe('a\\x0db\\x7fc\\x9bd')
    expect(escapeControls('tabs\tand\nnewlines stay; é ü 名 stay')).toBe('tabs\tand\nnewlines stay; é ü 名 stay')
  })

  it('in every string a JSON record holds, keys and numbers untouched', () => {
    expect(parseJsonSafely('{"operator":"\\u001b[31mroot","n":3,"list":["\\u0007"]}')).toEqual({operator: '\\x1b[31mroot', n: 3, list: ['\\x07']})
  })
})
