// The one page every `--html` report is written as: self-contained (inline SVG and stylesheet, no
// scripts, no links out), so it can be mailed or attached to an incident as a single file. It
// carries the bridge page's stylesheet (assets/look.css), so a report and the live page look alike.

import {lookCss} from './look.js'
import {escapeXml} from './svg.js'

/** A whole page: its title as the document's and the first heading (or `heading`), then the body as given (already HTML). */
export function htmlPage(title: string, body: string, heading = title): string {
  const e = escapeXml
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${e(title)}</title>
<style>
${lookCss()}</style>
</head><body><main>
<h1>${e(heading)}</h1>
${body}
</main>
</body></html>
`
}

/** A gate's verdict in a table cell: a glyph and the word, coloured only as an aid (look.css's data-status). */
export function verdictCell(outcome: 'pass' | 'fail' | 'inconclusive', suffix = ''): string {
  const glyph = outcome === 'pass' ? '✓' : outcome === 'fail' ? '✗' : '?'
  return `<td data-status="${outcome}">${glyph} ${outcome}${escapeXml(suffix)}</td>`
}

/** A table of text cells, each escaped; the first row of the header may be blank. */
export function htmlTable(header: string[], rows: string[][]): string {
  const e = escapeXml
  return `<table><thead><tr>${header.map((h) => `<th scope="col">${e(h)}</th>`).join('')}</tr></thead><tbody>
${rows.map((r) => `<tr>${r.map((c) => `<td>${e(c)}</td>`).join('')}</tr>`).join('\n')}
</tbody></table>`
}

/** An SVG made for a file, inline in a page: named as an image for screen readers. */
export function inlineSvg(svg: string): string {
  return svg.replace(/^<svg /, '<svg role="img" ')
}

/** Paragraphs of text, each escaped. */
export function htmlParagraphs(lines: string[]): string {
  return lines.map((l) => `<p>${escapeXml(l)}</p>`).join('\n')
}
