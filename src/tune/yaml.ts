import {Document, isAlias, isMap, isSeq, parseDocument, visit, YAMLSeq, type Node, type YAMLMap} from 'yaml'

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

/** A path into the runbook, and why tune cannot edit what is there. */
export interface EditProblem {
  path: Array<string | number>
  message: string
}

/**
 * Where the ramps tune would edit go through YAML anchors and aliases it cannot edit through: a
 * step that is an alias of another (or is aliased elsewhere), or a schedule or bake that is one.
 * Editing one place would change every place that shares the node, or drop an anchor others
 * still name. Found before the search, so the refusal costs nothing.
 */
export function aliasProblems(text: string, indexes: number[]): EditProblem[] {
  const doc = parseDocument(text)
  const aliased = new Set<string>()
  visit(doc, {Alias: (_key, node) => void aliased.add(node.source)})
  const shared = (node: unknown): string | null => {
    if (isAlias(node)) return `*${node.source}, an alias of a node defined elsewhere`
    const anchor = (node as Node | undefined)?.anchor
    return anchor && aliased.has(anchor) ? `anchored as &${anchor}, which *${anchor} repeats elsewhere` : null
  }
  const fix =
    'tune edits each ramp in place, and one node shared by several places cannot take a different schedule or bake in each; write it out in full there, then tune again'
  const steps = doc.get('steps', true)
  if (isAlias(steps)) return [{path: ['steps'], message: `steps is ${shared(steps)}; ${fix}`}]
  if (!isSeq(steps)) return []
  const problems: EditProblem[] = []
  for (const index of indexes) {
    const step = steps.items[index]
    const whole = shared(step)
    if (whole) {
      problems.push({path: ['steps', index], message: `steps[${index}] is ${whole}; ${fix}`})
      continue
    }
    if (!isMap(step)) continue
    for (const key of ['schedule', 'bake']) {
      const why = shared(step.get(key, true))
      if (why) problems.push({path: ['steps', index, key], message: `steps[${index}].${key} is ${why}; ${fix}`})
    }
  }
  return problems
}

/** The edited steps as list items at the file's own indentation, each under a comment naming the step it replaces. */
function snippetOf(doc: Document, text: string, edits: RampEdit[]): string {
  return edits
    .map((edit) => {
      const node = doc.getIn(['steps', edit.index], true) as YAMLMap
      const item = new Document(new YAMLSeq())
      // A step that names an anchor defined elsewhere (`gate: *errgate`) is pasted with it written
      // out: an alias alone in the snippet would name nothing.
      let hasAlias = false
      visit(node, {Alias: () => void (hasAlias = true)})
      ;(item.contents as YAMLSeq).items.push(hasAlias ? resolved(item, doc, node) : node)
      const indent = isMap(node) && node.range ? leadingSpaces(text, node.range[0]) : ''
      const lines = item.toString(output).trimEnd().split('\n')
      return [`# steps[${edit.index}]`, ...lines].map((line) => `${indent}${line}`).join('\n')
    })
    .join('\n')
}

/** A step's node with its aliases written out, its schedule kept a flow list as runbooks write it. */
function resolved(into: Document, doc: Document, node: YAMLMap): Node {
  const plain = into.createNode(node.toJS(doc)) as YAMLMap
  const schedule = plain.get('schedule', true)
  if (isSeq(schedule)) schedule.flow = true
  return plain
}

/** The spaces before the `-` of the list item that starts at `offset`. */
function leadingSpaces(text: string, offset: number): string {
  const lineStart = text.lastIndexOf('\n', offset - 1) + 1
  return /^ */.exec(text.slice(lineStart, offset))![0]
}
