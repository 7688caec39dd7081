// The one page every `--html` report is written as: self-contained (inline SVG, no scripts, no
// links out), so it can be mailed or attached to an incident as a single file.

import {escapeXml} from './svg.js'

const style =
  'body{font-family:system-ui,sans-serif;margin:2rem}table{border-collapse:collapse}td,th{padding:.2rem .6rem;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}svg{max-width:100%;height:auto}'

/** A whole page: its title as the document's and the first heading, then the body as given (already HTML). */
export function htmlPage(title: string, body: string): string {
  const e = escapeXml
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${e(title)}</title>
<style>${style}</style>
</head><body>
<h1>${e(title)}</h1>
${body}
</body></html>
`
}

/** A table of text cells, each escaped; the first row of the header may be blank. */
export function htmlTable(header: string[], rows: string[][]): string {
  const e = escapeXml
  return `<table><thead><tr>${header.map((h) => `<th>${e(h)}</th>`).join('')}</tr></thead><tbody>
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
