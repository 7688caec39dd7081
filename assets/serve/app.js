// sluice serve's page: the runs in the state store, and one run as it goes. Everything from the
// journal is set as text (never as markup); no file is fetched from anywhere but this server.
'use strict'

const main = document.getElementById('main')
const connection = document.getElementById('connection')
const storeLabel = document.getElementById('store')
const svgNs = 'http://www.w3.org/2000/svg'

/** An element with attributes and children; strings become text nodes. */
function el(tag, attrs, ...children) {
  const e = document.createElement(tag)
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue
    if (k === 'class') e.className = v
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v)
    else e.setAttribute(k, v === true ? '' : String(v))
  }
  for (const c of children.flat()) if (c !== null && c !== undefined && c !== false) e.append(c instanceof Node ? c : String(c))
  return e
}

function svg(tag, attrs, text) {
  const e = document.createElementNS(svgNs, tag)
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v))
  if (text !== undefined) e.textContent = text
  return e
}

const time = (iso) => (typeof iso === 'string' && iso.length >= 19 ? iso.slice(11, 19) : String(iso))
const ago = (iso) => {
  const s = Math.round((Date.now() - Date.parse(iso)) / 1000)
  if (!Number.isFinite(s)) return ''
  if (s < 60) return `${s} s ago`
  if (s < 3600) return `${Math.floor(s / 60)} min ago`
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min ago`
}

/** Status as a glyph and a word: never colour alone. */
const glyphs = {
  running: '▶',
  completed: '✓',
  'rolled-back': '↩',
  'gate-failed': '✗',
  failed: '✗',
  held: '■',
  'rollback-held': '■',
  refused: '⊘',
  interrupted: '⏹',
  dead: '†',
  unfinished: '…',
  torn: '⚠',
  unreadable: '⚠',
}
const statusText = (status, detail) => `${glyphs[status] || '•'} ${status}${detail ? ` (${detail})` : ''}`

let current = null
function closeStream() {
  if (current) current.close()
  current = null
}

/** Follows an event stream of views, drawing each; says when the connection drops and comes back. */
function follow(url, draw) {
  closeStream()
  const source = new EventSource(url)
  current = source
  source.onopen = () => {
    connection.textContent = '● live'
    connection.dataset.state = 'live'
  }
  source.onerror = () => {
    connection.textContent = '○ reconnecting…'
    connection.dataset.state = 'lost'
  }
  source.onmessage = (m) => draw(JSON.parse(m.data))
  source.addEventListener('trouble', (m) => {
    connection.textContent = `⚠ ${JSON.parse(m.data).error}`
  })
}

function route() {
  const run = /^#\/run\/([0-9a-f-]+)$/.exec(location.hash)
  if (run) showRun(run[1])
  else showBoard()
}

// ---------------------------------------------------------------- all runs

function showBoard() {
  document.title = 'sluice: runs'
  main.replaceChildren(el('p', {}, 'Reading the state store…'))
  follow('/api/board/events', drawBoard)
}

function drawBoard(board) {
  storeLabel.textContent = board.store
  const freeze = board.freeze
    ? el(
        'p',
        {class: 'freeze', id: 'freeze'},
        `❄ Deploys frozen by ${board.freeze.by} since ${board.freeze.since}: ${board.freeze.reason}`,
        board.freeze.expires ? ` (expires ${board.freeze.expires})` : '',
      )
    : el('p', {class: 'freeze none', id: 'freeze'}, 'No freeze in force.')
  const rows = board.runs.map((r) =>
    el(
      'tr',
      {'data-status': r.status},
      el('td', {}, el('a', {href: `#/run/${r.runId}`}, r.runId)),
      el('td', {}, r.runbook),
      el('td', {class: 'status'}, statusText(r.status, r.detail), r.pausedBy ? el('div', {}, `⏸ paused by ${r.pausedBy}`) : ''),
      el('td', {}, r.step || ''),
      el('td', {}, `${r.operator}@${r.host}`),
      el('td', {}, `${time(r.startedAt)} (${ago(r.startedAt)})`),
    ),
  )
  const locks = board.locks.map((l) => {
    const left = Math.round((Date.parse(l.heartbeat) + l.leaseSeconds * 1000 - Date.now()) / 1000)
    return el(
      'tr',
      {},
      el('td', {}, l.resource),
      el('td', {}, el('a', {href: `#/run/${l.runId}`}, l.runId)),
      el('td', {}, `${l.operator}@${l.host} (pid ${l.pid})`),
      el('td', {}, `${time(l.heartbeat)} (${ago(l.heartbeat)})`),
      el('td', {}, left > 0 ? `lapses in ${left} s without a renewal` : 'lease lapsed unless renewed'),
    )
  })
  main.replaceChildren(
    el('h1', {}, `Runs (${board.runs.length})`),
    freeze,
    el(
      'table',
      {id: 'runs'},
      el('caption', {}, 'Every run in the store, newest first'),
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          ['Run', 'Runbook', 'Status', 'Step', 'Operator', 'Started'].map((h) => el('th', {scope: 'col'}, h)),
        ),
      ),
      el('tbody', {}, rows.length ? rows : el('tr', {}, el('td', {colspan: 6}, 'No runs yet.'))),
    ),
    el('h2', {}, `Locks and leases (${board.locks.length})`),
    el(
      'table',
      {id: 'locks'},
      el(
        'thead',
        {},
        el(
          'tr',
          {},
          ['Resource', 'Run', 'Holder', 'Last heartbeat', 'Lease'].map((h) => el('th', {scope: 'col'}, h)),
        ),
      ),
      el('tbody', {}, locks.length ? locks : el('tr', {}, el('td', {colspan: 5}, 'No locks held.'))),
    ),
  )
}

// ---------------------------------------------------------------- one run

let controlsOn = false

/** The rehearsal's prediction for the run shown, once it has come (or why there is none). */
let prediction = null
/** The run view last drawn, to draw again when the prediction comes. */
let lastRun = null

function showRun(runId) {
  document.title = `sluice: ${runId}`
  prediction = null
  fetch(`/api/runs/${runId}/prediction`, {headers: authHeaders()})
    .then((r) => r.json())
    .then((p) => {
      prediction = {runId, ...p}
      // Drawn at once with the run as last seen, not at its next entry.
      if (lastRun && lastRun.runId === runId) drawRun(lastRun)
    })
    .catch(() => undefined)
  main.replaceChildren(el('p', {}, `Reading run ${runId}…`))
  fetch('/api/board', {headers: authHeaders()})
    .then((r) => r.json())
    .then((b) => {
      controlsOn = b.controls === true
      storeLabel.textContent = b.store || ''
    })
    .catch(() => undefined)
    .finally(() => follow(`/api/runs/${runId}/events`, (message) => drawRun(merged(lastRun, message))))
}

/** How many of each growing part a page keeps, as the server says in its first message. */
let keep = {lines: 500, verdicts: 2000, changes: 1000, weights: 2000}

/**
 * A run's message on the page as it stands: a whole view (since 0, as on every reconnect) replaces
 * what was drawn; any other adds what the entries after `since` added, and puts each change it
 * touched (an outcome come after its intent) in its place.
 */
function merged(previous, message) {
  if (message.since === 0 || !previous || previous.runId !== message.runId) {
    if (message.keep) keep = message.keep
    return message
  }
  const appended = (rows, added, most) => {
    const last = rows.length ? rows[rows.length - 1].seq : 0
    const all = rows.concat(added.filter((row) => row.seq > last))
    return most ? all.slice(-most) : all
  }
  const touched = new Map(message.changes.map((c) => [c.seq, c]))
  const changes = previous.changes.map((c) => touched.get(c.seq) || c)
  const known = new Set(previous.changes.map((c) => c.seq))
  return {
    ...message,
    lines: appended(previous.lines, message.lines, keep.lines),
    verdicts: appended(previous.verdicts, message.verdicts, keep.verdicts),
    changes: changes.concat(message.changes.filter((c) => !known.has(c.seq))).slice(-keep.changes),
    weights: appended(previous.weights, message.weights, keep.weights),
    controls: appended(previous.controls, message.controls),
    placements: appended(previous.placements, message.placements),
  }
}

function authHeaders() {
  const token = sessionStorage.getItem('sluice-token')
  return token ? {authorization: `Bearer ${token}`} : {}
}

/** Parts of the run view the reader may have switched between: kept across redraws. */
const shown = {map: 'chart', weights: 'chart', verdicts: 'chart'}

function drawRun(run) {
  lastRun = run
  document.title = `sluice: ${run.runbook} ${run.life.status}`
  const current = run.steps.find((s) => s.state === 'running')
  const focus = document.activeElement && document.activeElement.id
  main.replaceChildren(
    el('p', {}, el('a', {href: '#/'}, '← all runs')),
    el('h1', {}, `${run.runbook} `, el('span', {class: 'run-id'}, run.runId)),
    el(
      'p',
      {class: 'status', id: 'run-status', 'data-status': run.life.status},
      statusText(run.life.status, run.life.detail),
      run.phase === 'back' ? ' · on the way back' : '',
      run.pausedBy ? ` · ⏸ paused by ${run.pausedBy}` : '',
    ),
    el('p', {}, `Started by ${run.operator}@${run.host} at ${run.startedAt}; last entry ${run.lastSeq}.`),
    predictionLine(run),
    run.torn ? el('p', {class: 'warning'}, `⚠ ${run.torn}`) : '',
    controlsOn ? controlPanel(run) : '',
    el('h2', {}, 'Steps'),
    el(
      'ol',
      {id: 'steps', class: 'steps'},
      run.steps.map((s) =>
        el(
          'li',
          {'data-state': s.state, 'aria-current': s === current ? 'step' : false, value: s.index + 1},
          el('span', {class: 'mark'}, {running: '▶ now', done: '✓', skipped: '–', stopped: '✗', waiting: '·'}[s.state]),
          ' ',
          el('strong', {}, s.title),
          s.end ? el('div', {class: 'end'}, s.end) : '',
          s.details.length
            ? el(
                'details',
                {},
                el('summary', {}, 'plan'),
                el(
                  'ul',
                  {},
                  s.details.map((d) => el('li', {}, d)),
                ),
              )
            : '',
        ),
      ),
    ),
    run.placements.length ? section('map', 'Pool on its map', mapChart(run.placements[run.placements.length - 1]), placementsTable(run)) : '',
    section('weights', 'Weights over time', weightsChart(run), weightsTable(run)),
    section('verdicts', 'Gate verdicts', verdictsChart(run), verdictsTable(run)),
    el('h2', {}, `Changes (${run.counts.changes}${run.counts.changes > run.changes.length ? `, the last ${run.changes.length} shown` : ''})`),
    table(
      'changes',
      ['Time', 'Step', 'Change', 'Outcome'],
      run.changes.map((c) => [
        time(c.at),
        c.step,
        c.text,
        c.outcome === 'made' ? '✓ made' : c.outcome === 'failed' ? `✗ failed: ${c.error || ''}` : '? no outcome recorded',
      ]),
    ),
    el('h2', {}, `Controls (${run.controls.length})`),
    table(
      'controls',
      ['Time', 'Control', 'By', 'What it did'],
      run.controls.map((c) => [time(c.at), c.control, c.by, c.did]),
    ),
    el('h2', {}, 'Locks it holds'),
    table(
      'run-locks',
      ['Resource', 'Holder', 'Heartbeat', 'Lease'],
      run.locks.map((l) => [l.resource, `${l.operator}@${l.host} (pid ${l.pid})`, time(l.heartbeat), `${l.leaseSeconds} s`]),
    ),
    el('h2', {}, 'Journal'),
    el(
      'ol',
      {id: 'journal', class: 'journal'},
      run.lines.slice(-300).map((l) => el('li', {value: l.seq}, `${time(l.at)} ${l.text}`)),
    ),
  )
  if (focus) document.getElementById(focus)?.focus()
}

function predictionLine(run) {
  if (!prediction || prediction.runId !== run.runId) return el('p', {id: 'prediction'}, 'Rehearsing the runbook from its start…')
  if (prediction.none) return el('p', {id: 'prediction'}, `No prediction: ${prediction.none}.`)
  return el(
    'p',
    {id: 'prediction'},
    `Rehearsed from its start against ${prediction.scenario}: ${prediction.outcome} in ${prediction.seconds} s, ${prediction.lostPercent}% of demand lost (${prediction.message}). The weights chart draws it in thin dotted lines (○).`,
  )
}

/** A part with a chart and the same data as a table, the reader's choice kept across redraws. */
function section(key, title, chart, tableView) {
  const pick = (how) => () => {
    shown[key] = how
    document.getElementById(`${key}-chart`).hidden = how !== 'chart'
    document.getElementById(`${key}-table`).hidden = how !== 'table'
    document.getElementById(`${key}-as-chart`).setAttribute('aria-pressed', String(how === 'chart'))
    document.getElementById(`${key}-as-table`).setAttribute('aria-pressed', String(how === 'table'))
  }
  return el(
    'section',
    {id: key},
    el(
      'h2',
      {},
      title,
      ' ',
      el('button', {id: `${key}-as-chart`, type: 'button', 'aria-pressed': String(shown[key] === 'chart'), onclick: pick('chart')}, 'chart'),
      el('button', {id: `${key}-as-table`, type: 'button', 'aria-pressed': String(shown[key] === 'table'), onclick: pick('table')}, 'table'),
    ),
    el('div', {id: `${key}-chart`, hidden: shown[key] !== 'chart'}, chart),
    el('div', {id: `${key}-table`, hidden: shown[key] !== 'table'}, tableView),
  )
}

function table(id, heads, rows) {
  return el(
    'table',
    {id},
    el(
      'thead',
      {},
      el(
        'tr',
        {},
        heads.map((h) => el('th', {scope: 'col'}, h)),
      ),
    ),
    el(
      'tbody',
      {},
      rows.length
        ? rows.map((r) =>
            el(
              'tr',
              {},
              // A cell with a status carries it as the reports' do (look.css colours it; the glyph and word say it).
              r.map((c) => (c && typeof c === 'object' && 'status' in c ? el('td', {'data-status': c.status}, c.text) : el('td', {}, c))),
            ),
          )
        : el('tr', {}, el('td', {colspan: heads.length}, 'None.')),
    ),
  )
}

/**
 * Each series has its own dash pattern and glyph, and a colour only as an aid: the terminal's and
 * the --html reports' own (the server's /look.json), so a line looks the same in all three.
 * These stand in until it has come.
 */
let look = {
  series: [
    {dash: '', glyph: '━', color: '#0072b2'},
    {dash: '7 5', glyph: '╍', color: '#e69f00'},
    {dash: '0.5 6', glyph: '┅', color: '#cc79a7'},
  ],
  predicted: {dash: '2 6', glyph: '○', color: '#777'},
}
const styleOf = (i) => look.series[i % look.series.length]

/** A chart's frame: the svg, its scale upwards from 0 to `yMax`, and five grid lines each labelled by `say`. */
function framed({w, h, left, right, top, bottom, yMax, label, cls, say}) {
  const y = (v) => top + (1 - Math.max(0, Math.min(yMax, v)) / yMax) * (h - top - bottom)
  const chart = svg('svg', {viewBox: `0 0 ${w} ${h}`, role: 'img', 'aria-label': label, class: cls})
  for (let k = 0; k <= 4; k++) {
    const v = (yMax * k) / 4
    chart.append(svg('line', {x1: left, x2: w - right, y1: y(v), y2: y(v), class: 'grid'}))
    chart.append(svg('text', {x: left - 8, y: y(v) + 5, 'text-anchor': 'end', class: 'axis'}, say(v)))
  }
  return {chart, y}
}

/**
 * Stepped lines over time on an axis from 0 to `top` (100 for shares; a little over the largest
 * value or bound for a gate), one per series, each labelled with its glyph at its last value.
 */
function stepChart(label, times, series, marks, options) {
  const unit = (options && options.unit) || '%'
  const yMax = (options && options.max) || 100
  const w = 1000
  const h = 280
  const left = 64
  const right = 300
  const top = 20
  const bottom = 36
  const t0 = Math.min(...times)
  const t1 = Math.max(...times, t0 + 1)
  const x = (t) => left + ((t - t0) / (t1 - t0)) * (w - left - right)
  const {chart, y} = framed({w, h, left, right, top, bottom, yMax, label, cls: 'chart', say: (v) => `${Math.round(v * 100) / 100}${unit}`})
  for (const [t, anchor] of [
    [t0, 'start'],
    [(t0 + t1) / 2, 'middle'],
    [t1, 'end'],
  ])
    chart.append(svg('text', {x: x(t), y: h - 8, 'text-anchor': anchor, class: 'axis'}, new Date(t).toISOString().slice(11, 19)))
  const legends = []
  let drawn = 0
  series.forEach((s) => {
    const p = s.predicted ? look.predicted : styleOf(drawn++)
    let d = ''
    s.points.forEach(([t, v], k) => {
      d += k === 0 ? `M${x(t)},${y(v)}` : `H${x(t)}V${y(v)}`
    })
    if (s.points.length) d += `H${w - right}`
    const cls = s.predicted ? 'series predicted' : 'series'
    chart.append(svg('path', {d, class: cls, stroke: p.color, 'stroke-dasharray': p.dash}))
    // Each point marked, so a step is seen where two lines meet.
    for (const [t, v] of s.points) chart.append(svg('circle', {cx: x(t), cy: y(v), r: s.predicted ? 3 : 4, class: 'point', fill: p.color}))
    const lastV = s.points.length ? s.points[s.points.length - 1][1] : 0
    legends.push({y: y(lastV) + 5, glyph: p.glyph, color: p.color, text: ` ${s.name}: ${lastV}${unit}`, cls: s.predicted ? 'legend predicted' : 'legend'})
  })
  // Labels that would sit on one another are moved apart, in the order of their values.
  legends.sort((a, b) => a.y - b.y)
  for (let k = 1; k < legends.length; k++) legends[k].y = Math.max(legends[k].y, legends[k - 1].y + 20)
  for (const l of legends) {
    const label = svg('text', {x: w - right + 10, y: l.y, class: l.cls})
    label.append(svg('tspan', {class: 'glyph', fill: l.color}, l.glyph), svg('tspan', {}, l.text))
    chart.append(label)
  }
  for (const m of marks || [])
    chart.append(svg('text', {x: x(m.t), y: top - 4, 'text-anchor': 'middle', class: `mark ${m.ok ? 'ok' : 'bad'}`}, m.ok ? '✓' : '✗'))
  return chart
}

const regionText = {unharmed: '✓ unharmed', recovering: '↗ recovering', 'at-risk': '⚠ at risk', stuck: '✗ stuck'}
const rps = (v) => `${Math.round(v).toLocaleString('en-US')} rps`

/**
 * Where an assess step placed the pool: servers broken across, demand up, as `sluice assess`
 * draws its map. The point (●), what the servers left can serve at each count broken (dotted),
 * and the two lines the assessment walked through the point: along demand, where it tips (thick,
 * ✗ above); along servers broken, the stretches where it is stuck (thick, ✗). The words under it
 * say the same, with how many are out of rotation now.
 */
function mapChart(p) {
  const place = p.place
  const servers = place.now.servers
  const yMax = Math.max(place.now.demand * 2, (place.stuckAboveDemand || 0) * 1.1, place.capacity.pool * 1.05, 1)
  const w = 1000
  const h = 360
  const left = 90
  const right = 260
  const top = 24
  const bottom = 48
  const x = (n) => left + (n / Math.max(1, servers)) * (w - left - right)
  const {chart, y} = framed({w, h, left, right, top, bottom, yMax, label: `${p.pool} on its map: ${p.text}`, cls: 'chart map', say: rps})
  for (const n of [0, Math.round(servers / 2), servers]) chart.append(svg('text', {x: x(n), y: h - 22, 'text-anchor': 'middle', class: 'axis'}, String(n)))
  chart.append(svg('text', {x: (left + w - right) / 2, y: h - 4, 'text-anchor': 'middle', class: 'axis'}, `servers broken (of ${servers})`))
  // What those in rotation can serve, by the scenario's figure per server.
  const [walked, stuck] = [styleOf(0), styleOf(1)]
  const predicted = look.predicted
  chart.append(
    svg('line', {
      x1: x(0),
      y1: y(place.capacity.pool),
      x2: x(servers),
      y2: y(0),
      class: 'series predicted',
      stroke: predicted.color,
      'stroke-dasharray': predicted.dash,
    }),
  )
  chart.append(
    svg(
      'text',
      {x: x(0) + 8, y: y(place.capacity.pool) - 6, class: 'legend'},
      `${predicted.glyph} what the rest can serve (${rps(place.capacity.perServer)} a server)`,
    ),
  )
  // Along demand at this many out: it comes back below the edge, stuck above it.
  const edge = place.stuckAboveDemand
  chart.append(svg('line', {x1: x(place.out), x2: x(place.out), y1: y(0), y2: y(edge === null ? yMax : edge), class: 'series', stroke: walked.color}))
  if (edge !== null) {
    chart.append(
      svg('line', {x1: x(place.out), x2: x(place.out), y1: y(edge), y2: y(yMax), class: 'series stuck', stroke: stuck.color, 'stroke-dasharray': stuck.dash}),
    )
    // Said at the top of the line, clear of the row of today's demand.
    chart.append(svg('text', {x: x(place.out) + 12, y: y(yMax) + 16, class: 'legend'}, `✗ stuck above ${rps(edge)} with ${place.out} broken`))
  }
  // Along servers out at today's demand: the stretches where it is stuck.
  chart.append(svg('line', {x1: x(0), x2: x(servers), y1: y(place.now.demand), y2: y(place.now.demand), class: 'series', stroke: walked.color}))
  for (const [a, b] of place.stuckOut) {
    chart.append(
      svg('line', {
        x1: x(a),
        x2: x(Math.max(b, a + 0.2)),
        y1: y(place.now.demand),
        y2: y(place.now.demand),
        class: 'series stuck',
        stroke: stuck.color,
        'stroke-dasharray': stuck.dash,
      }),
    )
    chart.append(
      svg(
        'text',
        {x: x((a + b) / 2), y: y(place.now.demand) + 30, 'text-anchor': 'middle', class: 'legend'},
        `✗ stuck with ${a === b ? a : `${a}–${b}`} broken`,
      ),
    )
  }
  chart.append(svg('text', {x: x(place.out), y: y(place.now.demand) + 7, 'text-anchor': 'middle', class: 'glyph now'}, '●'))
  chart.append(svg('text', {x: w - right + 12, y: y(place.now.demand) + 5, class: 'legend now'}, `● now: ${place.out} broken, ${rps(place.now.demand)}`))
  chart.append(svg('text', {x: w - right + 12, y: y(place.now.demand) + 29, class: 'legend now'}, regionText[place.region] || place.region))
  return el('figure', {}, chart, el('figcaption', {id: 'map-words'}, `${p.step}, ${time(p.at)}: ${p.text}`))
}

function placementsTable(run) {
  return table(
    'map-rows',
    ['Time', 'Step', 'Pool', 'Out of rotation', 'Placed at', 'Demand', 'Errors', 'In rotation can serve', 'Where', 'Stuck above', 'Stuck with'],
    run.placements.map((p) => [
      time(p.at),
      p.step,
      p.pool,
      `${p.place.now.servers - p.place.now.healthy} of ${p.place.now.servers}`,
      `${p.place.out} broken`,
      rps(p.place.now.demand),
      `${(p.place.now.errorRate * 100).toFixed(1)}%`,
      rps(p.place.capacity.inRotation),
      regionText[p.place.region] || p.place.region,
      p.place.stuckAboveDemand === null ? 'not within twice today’s demand' : rps(p.place.stuckAboveDemand),
      p.place.stuckOut.length ? p.place.stuckOut.map(([a, b]) => (a === b ? `${a}` : `${a}–${b}`)).join(' or ') + ' broken' : 'back with any number broken',
    ]),
  )
}

function weightsChart(run) {
  const predicted = prediction && prediction.runId === run.runId && prediction.weights ? prediction.weights : []
  if (run.weights.length === 0 && predicted.length === 0) return el('p', {}, 'No weights changed yet.')
  const keys = [...new Set(run.weights.flatMap((p) => Object.keys(p.shares)))].sort()
  const start = Date.parse(run.startedAt)
  const times = [...run.weights.map((p) => Date.parse(p.at)), ...predicted.map((p) => start + p.t * 1000), Date.now()]
  const series = keys.map((k) => ({name: k, points: run.weights.map((p) => [Date.parse(p.at), p.shares[k] ?? 0])}))
  // The rehearsal's weights, from the run's start: only the pools the run has moved, so the two agree in name.
  const rehearsed = keys.map((k) => ({name: `${k} predicted`, predicted: true, points: predicted.map((p) => [start + p.t * 1000, p.shares[k] ?? 0])}))
  return stepChart(
    'Each pool’s share of the weight over time, and the rehearsal’s prediction in dotted lines',
    times,
    [...series, ...rehearsed.filter((r) => r.points.length)],
    [],
  )
}

function weightsTable(run) {
  const keys = [...new Set(run.weights.flatMap((p) => Object.keys(p.shares)))].sort()
  return table(
    'weights-rows',
    ['Time', 'Where', ...keys],
    run.weights.map((p) => [time(p.at), p.resource, ...keys.map((k) => `${p.shares[k] ?? 0}%`)]),
  )
}

function verdictsChart(run) {
  const numeric = run.verdicts.filter((v) => v.unit === '%' && v.value !== null)
  if (run.verdicts.length === 0) return el('p', {}, 'No gate has been judged yet.')
  if (numeric.length === 0) return el('p', {}, 'No verdict in % to draw; the table has them all.')
  const gates = [...new Set(numeric.map((v) => v.gate))]
  const times = numeric.map((v) => Date.parse(v.at))
  const series = gates.map((g) => ({name: g, points: numeric.filter((v) => v.gate === g).map((v) => [Date.parse(v.at), Math.round(v.value * 100) / 100])}))
  const marks = numeric.map((v) => ({t: Date.parse(v.at), ok: v.outcome === 'pass'}))
  // Bounds drawn as lines of their own, so a value's distance to its bound is seen.
  const bounds = gates.map((g) => ({
    name: `${g} bound`,
    points: numeric.filter((v) => v.gate === g && v.bound !== null).map((v) => [Date.parse(v.at), v.bound]),
  }))
  const max = Math.max(...numeric.map((v) => v.value), ...numeric.map((v) => v.bound || 0)) * 1.25 || 1
  return stepChart('Each gate’s measured value and its bound over time, ✓ for a pass and ✗ for a fail', times, [...series, ...bounds], marks, {max})
}

function verdictsTable(run) {
  return table(
    'verdict-rows',
    ['Time', 'Step', 'At', 'Gate', 'Measured', 'Bound', 'Baseline', 'Verdict'],
    run.verdicts.map((v) => [
      time(v.at),
      v.step,
      v.context,
      v.gate,
      v.measured,
      v.bound === null ? '' : `${v.bound}${v.unit === '%' ? '%' : ` ${v.unit}`}`,
      v.baseline || '',
      {status: v.outcome, text: `${v.outcome === 'pass' ? '✓ pass' : v.outcome === 'fail' ? '✗ fail' : '? inconclusive'}${v.why ? `: ${v.why}` : ''}`},
    ]),
  )
}

// ---------------------------------------------------------------- controls

/** The panel is made once per run and kept across redraws, so what the operator is typing stays. */
let panel = null
function controlPanel(run) {
  if (!panel || panel.dataset.run !== run.runId) panel = makePanel(run)
  const running = run.life.status === 'running'
  for (const b of panel.querySelectorAll('button')) b.disabled = !running
  panel.querySelector('#not-running').hidden = running
  return panel
}

function makePanel(run) {
  const operator = el('input', {id: 'operator', type: 'text', autocomplete: 'name', value: localStorage.getItem('sluice-operator') || ''})
  const token = el('input', {id: 'token', type: 'password', autocomplete: 'off', value: sessionStorage.getItem('sluice-token') || ''})
  const result = el('p', {id: 'control-result', role: 'status', 'aria-live': 'polite'})
  const act = (kind, label, extra) =>
    el(
      'button',
      {
        type: 'button',
        id: `control-${label.toLowerCase().replace(/[^a-z]+/g, '-')}`,
        onclick: async () => {
          const who = operator.value.trim()
          if (!who) {
            result.textContent = 'Give your name first: the journal records who sent each control.'
            operator.focus()
            return
          }
          if (!window.confirm(`${label} run ${run.runId} (${run.runbook}) as ${who}?`)) return
          localStorage.setItem('sluice-operator', who)
          sessionStorage.setItem('sluice-token', token.value)
          result.textContent = `${label}: sent, waiting for the run to take it up…`
          try {
            const r = await fetch(`/api/runs/${run.runId}/control`, {
              method: 'POST',
              headers: {'content-type': 'application/json', authorization: `Bearer ${token.value}`},
              body: JSON.stringify({kind, operator: who, ...extra}),
            })
            const body = await r.json()
            result.textContent = r.ok
              ? `${label}: ${body.taken ? `the run took it up: ${body.taken.did}` : 'sent; the run has not taken it up yet'}`
              : `${label} refused (${r.status}): ${body.error}`
          } catch (error) {
            result.textContent = `${label} not sent: ${error.message}`
          }
        },
      },
      label,
    )
  return el(
    'section',
    {id: 'controls-panel', 'aria-label': 'Controls', 'data-run': run.runId},
    el('h2', {}, 'Controls'),
    el('p', {}, el('label', {for: 'operator'}, 'Your name '), operator, ' ', el('label', {for: 'token'}, 'Token '), token),
    el(
      'p',
      {},
      act('pause', 'Pause', {}),
      ' ',
      act('promote', 'Promote', {}),
      ' ',
      act('abort', 'Abort', {}),
      ' ',
      act('abort', 'Abort and roll back', {rollback: true}),
    ),
    el('p', {id: 'not-running'}, 'The run is not running: there is nothing to steer.'),
    result,
  )
}

// Last, once every binding above is initialised; the charts' look first, if it comes.
window.addEventListener('hashchange', route)
fetch('/look.json')
  .then((r) => r.json())
  .then((l) => {
    look = l
  })
  .catch(() => undefined)
  .finally(route)
