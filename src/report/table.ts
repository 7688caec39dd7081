/** How a table is fitted to the terminal; without a width it is as wide as its cells. */
export interface TableFit {
  /** The width to fit in, in characters (src/cli/output-width.ts). */
  width?: number
  /**
   * The columns of free text (a description, a host) that may be cut, with an ellipsis, to fit:
   * the widest first. Every other column (ids a person copies, times, figures) is never cut, so
   * a table whose other columns alone are too wide is wider than asked.
   */
  free?: number[]
  /**
   * Wrap a free cell that does not fit onto lines of its own under it, at spaces, instead of
   * cutting it: for text a person reads to choose (a runbook's description); a list grepped a row
   * at a time (the journal's runs) is cut, one line a row.
   */
  wrap?: boolean
  /**
   * Fit by breaking the header's names at spaces, onto lines of their own, before anything else:
   * every column may narrow to its widest cell or its header's longest word, so no figure is cut
   * and no name split (a table of figures under long names, `simulate --compare`'s).
   */
  wrapHeader?: boolean
}

/** A free column is not cut below this (or its header, or its widest cell if that is narrower). */
const narrowest = 8
const gap = '  '

/**
 * A plain-text table with a header rule: each column as wide as its widest cell, the columns
 * aligned, free-text columns cut to fit a width when one is given. Widths count code points: the
 * tables hold no wide (East Asian) or combining characters.
 */
export function formatTable(header: string[], rows: string[][], fit: TableFit = {}): string {
  const length = (s: string): number => [...s].length
  const widths = header.map((h, c) => Math.max(length(h), ...rows.map((r) => length(r[c] ?? ''))))
  if (fit.width !== undefined && fit.wrapHeader) {
    const floors = header.map((h, c) => Math.max(...h.split(' ').map(length), ...rows.map((r) => length(r[c] ?? ''))))
    // A name narrows a line break at a time (`full service after fix` to `full service`), the widest
    // first, so as few names break, into as few lines, as the width allows.
    const narrower = (c: number): number | undefined => {
      for (let w = widths[c] - 1; w >= floors[c]; w--) {
        const next = Math.max(floors[c], ...wrapText(header[c], w).map(length))
        if (next < widths[c]) return next
      }
      return undefined
    }
    shrinkTo(widths, fit.width, new Map(floors.map((f, c) => [c, f])), narrower)
  }
  if (fit.width !== undefined) shrink(widths, header, rows, fit.width, fit.free ?? [], fit.wrap ?? false)
  const line = (cells: string[]): string =>
    header
      .map((_, c) => (c === header.length - 1 ? cells[c] : cells[c] + ' '.repeat(widths[c] - length(cells[c]))))
      .join(gap)
      .trimEnd()
  const lines = (cells: string[], wrap = fit.wrap): string[] => {
    const parts = header.map((_, c) => (wrap ? wrapText(cells[c] ?? '', widths[c]) : [cut(cells[c] ?? '', widths[c])]))
    return Array.from({length: Math.max(...parts.map((p) => p.length))}, (_, i) => line(parts.map((p) => p[i] ?? '')))
  }
  return [...lines(header, fit.wrap || fit.wrapHeader), widths.map((w) => '─'.repeat(w)).join(gap), ...rows.flatMap((r) => lines(r))].join('\n')
}

/**
 * Narrows the widest free column, one character at a time, until the table fits or none can give
 * more. A column that wraps never narrows below its longest word: a name (a file, a metric, a
 * host) is never split across lines, though the table may then be wider than asked.
 */
function shrink(widths: number[], header: string[], rows: string[][], width: number, free: number[], wrap: boolean): void {
  const longestWord = (c: number): number => Math.max(0, ...rows.flatMap((r) => (r[c] ?? '').split(' ').map((w) => [...w].length)))
  const floor = (c: number): number => Math.min(widths[c], Math.max(narrowest, [...header[c]].length, wrap ? longestWord(c) : 0))
  shrinkTo(widths, width, new Map(free.map((c) => [c, floor(c)])))
}

/**
 * Narrows the widest of the columns given, each down to its floor, one character at a time (or to
 * the width `narrower` says is its next), until the table fits or none can give more.
 */
function shrinkTo(widths: number[], width: number, floors: Map<number, number>, narrower?: (c: number) => number | undefined): void {
  const total = (): number => widths.reduce((a, b) => a + b, 0) + gap.length * (widths.length - 1)
  while (total() > width) {
    const widest = [...floors.keys()].filter((c) => widths[c] > floors.get(c)!).sort((a, b) => widths[b] - widths[a])[0]
    if (widest === undefined) return
    widths[widest] = narrower?.(widest) ?? widths[widest] - 1
  }
}

/** The cell as it fits its column: whole, or its start and an ellipsis. */
function cut(cell: string, width: number): string {
  const chars = [...cell]
  return chars.length <= width ? cell : `${chars.slice(0, width - 1).join('')}…`
}

/** The cell in lines of at most `width`, broken at spaces; a word longer than that (only where a column is given less than its longest word) broken where it must. */
function wrapText(cell: string, width: number): string[] {
  const out: string[] = []
  let current = ''
  for (const word of cell.split(' ')) {
    let rest = [...word]
    const joined = current === '' ? word : `${current} ${word}`
    if ([...joined].length <= width) {
      current = joined
      continue
    }
    if (current !== '') out.push(current)
    while (rest.length > width) {
      out.push(rest.slice(0, width).join(''))
      rest = rest.slice(width)
    }
    current = rest.join('')
  }
  return [...out, current]
}
