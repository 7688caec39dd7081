import {Document, isMap, parseDocument, YAMLSeq, type YAMLMap} from 'yaml'

// The tuned runbook as text: the author's file with only the ramps' schedules and bakes edited
// in place (yaml's Document API keeps the comments, the order and the rest of the formatting),
// and the ramp steps alone, to paste.

export interface RampEdit {
  /** The step's index in the runbook's steps. */
  index: number
  schedule: number[]
  bake: number
}

// yaml folds long plain strings at 80 columns by default; an edit must not reflow the author's lines.
const output = {lineWidth: 0, flowCollectionPadding: false}

/** The runbook's text with each edited ramp's schedule (a flow list, as runbooks write it) and bake replaced. */
export function editRamps(text: string, edits: RampEdit[]): {text: string; snippet: string} {
  const doc = parseDocument(text)
  for (const edit of edits) {
    doc.setIn(['steps', edit.index, 'schedule'], doc.createNode(edit.schedule, {flow: true}))
    doc.setIn(['steps', edit.index, 'bake'], edit.bake)
  }
  return {text: doc.toString(output), snippet: snippetOf(doc, text, edits)}
}

/**
 * The tuned text as the author's file was written: CRLF line endings if the original used them
 * (the YAML library writes LF), and the byte order mark if the original began with one (reading
 * drops it). The YAML is the same either way; a diff of the file shows only the ramps.
 */
export function inTheOriginalsForm(text: string, original: {text: string; bom: boolean}): string {
  const crlf = /\r\n/.test(original.text) && !/(^|[^\r])\n/.test(original.text)
  const body = crlf ? text.replace(/\r?\n/g, '\r\n') : text
  return original.bom ? `\ufeff${body}` : body
}

/** The edited steps as list items at the file's own indentation, each under a comment naming the step it replaces. */
function snippetOf(doc: Document, text: string, edits: RampEdit[]): string {
  return edits
    .map((edit) => {
      const node = doc.getIn(['steps', edit.index], true) as YAMLMap
      const item = new Document(new YAMLSeq())
      ;(item.contents as YAMLSeq).items.push(node)
      const indent = isMap(node) && node.range ? leadingSpaces(text, node.range[0]) : ''
      const lines = item.toString(output).trimEnd().split('\n')
      return [`# steps[${edit.index}]`, ...lines].map((line) => `${indent}${line}`).join('\n')
    })
    .join('\n')
}

/** The spaces before the `-` of the list item that starts at `offset`. */
function leadingSpaces(text: string, offset: number): string {
  const lineStart = text.lastIndexOf('\n', offset - 1) + 1
  return /^ */.exec(text.slice(lineStart, offset))![0]
}
