import {describe, expect, it} from 'vitest'
import {formatTable} from '../../src/report/table.js'

const header = ['id', 'status', 'note']
const rows = [
  ['20261130-054012-a1b2', 'completed', 'a short note'],
  ['20261130-061500-c3d4', 'dead (pid 4242 gone)', 'a much longer note that says a great deal more'],
]
const widest = (text: string): number => Math.max(...text.split('\n').map((l) => [...l].length))

describe('formatTable', () => {
  it('aligns each column at the width of its widest cell, with a rule under the header and no trailing spaces', () => {
    expect(formatTable(header, rows).split('\n')).toEqual([
      'id                    status                note',
      '────────────────────  ────────────────────  ──────────────────────────────────────────────',
      '20261130-054012-a1b2  completed             a short note',
      '20261130-061500-c3d4  dead (pid 4242 gone)  a much longer note that says a great deal more',
    ])
  })

  it('fits a width by cutting the widest free column, with an ellipsis, then the free columns in turn; never a column that is not free', () => {
    const table = formatTable(header, rows, {width: 60, free: [1, 2]})
    expect(table.split('\n')).toEqual([
      'id                    status              note',
      '────────────────────  ──────────────────  ──────────────────',
      '20261130-054012-a1b2  completed           a short note',
      '20261130-061500-c3d4  dead (pid 4242 go…  a much longer not…',
    ])
    expect(widest(table)).toBe(60)
  })

  it('cuts only the widest free column while it is the widest', () => {
    const lines = formatTable(header, rows, {width: 66, free: [1, 2]}).split('\n')
    expect(lines.slice(2)).toEqual([
      '20261130-054012-a1b2  completed             a short note',
      '20261130-061500-c3d4  dead (pid 4242 gone)  a much longer note th…',
    ])
    expect(Math.max(...lines.map((l) => [...l].length))).toBe(66)
  })

  it('is wider than asked rather than cut a free column below 8 characters (or its header), or any other column', () => {
    const table = formatTable(header, rows, {width: 20, free: [2]})
    const lines = table.split('\n')
    expect(lines[3]).toBe('20261130-061500-c3d4  dead (pid 4242 gone)  a much …')
    expect(lines[2]).toContain('20261130-054012-a1b2  completed')
    expect(widest(table)).toBe(52)
  })

  it('leaves a table that fits as it is', () => {
    expect(formatTable(header, rows, {width: 200, free: [1, 2]})).toBe(formatTable(header, rows))
  })

  it('wraps a free cell at spaces onto lines of its own, the other columns blank there; the header whole', () => {
    const table = formatTable(
      ['name', 'description'],
      [
        ['alpha', 'one two three four five'],
        ['beta', 'abcdefghijk lmnop'],
      ],
      {width: 18, free: [1], wrap: true},
    )
    expect(table.split('\n')).toEqual([
      'name   description',
      '─────  ───────────',
      'alpha  one two',
      '       three four',
      '       five',
      'beta   abcdefghijk',
      '       lmnop',
    ])
  })

  it('never splits a word to wrap (issue 48): a name longer than the width asked keeps the column that wide', () => {
    const table = formatTable(
      ['name', 'description'],
      [
        ['alpha', 'one two three four five'],
        ['beta', 'abcdefghijklmnop'],
      ],
      {width: 17, free: [1], wrap: true},
    )
    expect(table.split('\n')).toEqual(['name   description', '─────  ────────────────', 'alpha  one two three', '       four five', 'beta   abcdefghijklmnop'])
  })

  it('counts characters, not bytes: box-drawing and dashes take one column', () => {
    const lines = formatTable(
      ['a', 'b'],
      [
        ['–', 'x'],
        ['±1 ×2', 'y'],
      ],
    ).split('\n')
    expect(lines.slice(2)).toEqual(['–      x', '±1 ×2  y'])
  })
})
