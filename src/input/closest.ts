/**
 * The candidate nearest to a mistyped word, for a "did you mean" hint on a command, a flag or a
 * runbook key. Only a near miss is suggested: a far one would send the reader the wrong way.
 */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  let best: {candidate: string; distance: number} | undefined
  for (const candidate of candidates) {
    const distance = editDistance(word.toLowerCase(), candidate.toLowerCase())
    if (!best || distance < best.distance) best = {candidate, distance}
  }
  if (!best || best.distance === 0) return undefined
  // Two edits catch most typos (a dropped letter, a swap); longer words may drift a third of their length.
  const near = best.distance <= Math.max(2, Math.floor(word.length / 3)) && best.distance < word.length
  return near ? best.candidate : undefined
}

/** Levenshtein distance, counting an adjacent swap as one edit (the commonest typo). */
export function editDistance(a: string, b: string): number {
  const rows = Array.from({length: a.length + 1}, (_, i) => [i, ...Array<number>(b.length).fill(0)])
  for (let j = 1; j <= b.length; j++) rows[0][j] = j
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      rows[i][j] = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) rows[i][j] = Math.min(rows[i][j], rows[i - 2][j - 2] + 1)
    }
  }
  return rows[a.length][b.length]
}
