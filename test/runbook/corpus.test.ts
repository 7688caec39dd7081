import {mkdtempSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {performance} from 'node:perf_hooks'
import {beforeAll, describe, expect, it} from 'vitest'
import {checkRehearsalScenario} from '../../src/wiring/rehearsal.js'
import {loadRunbookFile, parseRunbook} from '../../src/loader/load-runbook.js'
import {loadScenario} from '../../src/sim/scenario/load-scenario.js'
import {aliasBomb} from '../helpers/bad-runbooks.js'
import {sluiceInProcess} from '../helpers/command.js'
import {inputErrorOf} from '../helpers/scenario-files.js'

// A corpus of malformed runbooks, scenarios and flag sets: every number out of its bound, every
// rule a live run would otherwise find after taking its locks, and files that are not inputs at
// all. Each must be bad input (exit 2) that says where and what was expected, quickly, without a
// stack trace: a case that hangs or crashes is the bug this corpus exists to catch.

const dir = mkdtempSync(join(tmpdir(), 'sluice-corpus-'))

/** Within this, a refusal is prompt; past it, it is a hang. */
const promptMs = 2000

// ── runbooks ────────────────────────────────────────────────────────────────────────────────

interface Parts {
  targets?: string
  defaults?: string
  rehearsal?: string
  steps: string
}

const targets = `targets:
  dns:
    zone: Z1
    record: outlook.example.com.
    ttl: 30
    sets: {mailbox: mailbox, maintenance: maintenance}
  targetGroups: {mailbox: arn:tg/mailbox}
  listener: arn:listener
  metrics: {source: cloudwatch, loadBalancer: app/edge/1}
`

/** A runbook that passes every check (rehearsed against outlook-recovery) but for what a case changes. */
function runbook(parts: Parts): string {
  return `name: corpus
${parts.targets ?? targets}${parts.defaults ?? ''}rehearsal: {scenario: outlook-recovery${parts.rehearsal ?? ''}}
steps:
${parts.steps}`
}

const gate = '{metric: error-rate, threshold: 2}'

interface FileCase {
  name: string
  /** The file's text, or its bytes for what no string can hold. */
  text: string | Uint8Array
  message: RegExp
}

/** What `validate` does to a runbook: load it, then check it against its rehearsal scenario. */
function validateRunbook(file: string, text: string | Uint8Array): void {
  const runbook = typeof text === 'string' ? parseRunbook(file, text) : (writeFileSync(file, text), loadRunbookFile(file))
  if (runbook.rehearsal) checkRehearsalScenario(runbook)
}

// Every duration a runbook holds, each out of bounds in every way a number can be.
const durationSites: Array<{where: string; parts: (v: string) => Parts}> = [
  {where: 'ramp bake', parts: (v) => ({steps: `  - {action: ramp, set: mailbox, schedule: [50, 100], bake: ${v}}\n`})},
  {where: 'cycle bake', parts: (v) => ({steps: `  - {action: cycle, pool: mailbox, batch: 2, bake: ${v}}\n`})},
  {where: 'check bake', parts: (v) => ({steps: `  - {action: check, gate: ${gate}, bake: ${v}}\n`})},
  {where: 'defaults.bake', parts: (v) => ({defaults: `defaults: {bake: ${v}}\n`, steps: '  - {action: wait, for: 1}\n'})},
  {where: 'wait', parts: (v) => ({steps: `  - {action: wait, for: ${v}}\n`})},
  {where: 'step timeout', parts: (v) => ({steps: `  - {action: wait, for: 1, timeout: ${v}}\n`})},
  {where: 'freeze expires', parts: (v) => ({steps: `  - {action: freeze, reason: incident, expires: ${v}}\n`})},
  {where: 'retryAfter', parts: (v) => ({steps: `  - {action: restrict, type: background-sync, paths: [/sync/*], retryAfter: ${v}}\n`})},
  {where: 'drainTimeout', parts: (v) => ({steps: `  - {action: cycle, pool: mailbox, batch: 2, drainTimeout: ${v}}\n`})},
  {where: 'healthyTimeout', parts: (v) => ({steps: `  - {action: cycle, pool: mailbox, batch: 2, healthyTimeout: ${v}}\n`})},
  {where: 'hook timeout', parts: (v) => ({steps: `  - {action: cycle, pool: mailbox, batch: 2, restart: {command: [restart, '{id}'], timeout: ${v}}}\n`})},
  {where: 'record ttl', parts: (v) => ({targets: targets.replace('ttl: 30', `ttl: ${v}`), steps: '  - {action: wait, for: 1}\n'})},
  {where: 'rehearsal.startAt', parts: (v) => ({rehearsal: `, startAt: ${v}`, steps: '  - {action: wait, for: 1}\n'})},
  {where: 'gate window', parts: (v) => ({steps: `  - {action: check, gate: {metric: error-rate, threshold: 2, window: ${v}}}\n`})},
  {where: 'gate interval', parts: (v) => ({steps: `  - {action: check, gate: {metric: error-rate, threshold: 2, interval: ${v}}}\n`})},
  {where: 'defaults.gate.window', parts: (v) => ({defaults: `defaults: {gate: {window: ${v}}}\n`, steps: `  - {action: check, gate: ${gate}}\n`})},
]
const badDurations: Array<{value: string; message: RegExp}> = [
  {value: '1e9', message: /expected at most 86400 s \(a day\)$/},
  {value: '1e12', message: /expected at most 86400 s \(a day\)$/},
  {value: '25h', message: /expected at most 86400 s \(a day\)$/},
  {value: '-1', message: /expected a number >= 0$/},
  {value: '.inf', message: /: expected number or string, got Infinity$/},
  {value: 'forever', message: /expected a duration such as 30, 30s, 5m or 1h$/},
]

const runbookCases: FileCase[] = [
  ...durationSites.flatMap(({where, parts}) => badDurations.map(({value, message}) => ({name: `${where} of ${value}`, text: runbook(parts(value)), message}))),

  // Gates: how often, over what, and how many verdicts.
  ...['0', '0.5', '0s', '500ms'].map((v) => ({
    name: `gate interval ${v}`,
    text: runbook({steps: `  - {action: check, gate: {metric: error-rate, threshold: 2, interval: ${v}}}\n`}),
    message: /gate\.interval: expected at least 1 s between verdicts$/,
  })),
  {
    name: 'defaults.gate.interval 0',
    text: runbook({defaults: 'defaults: {gate: {interval: 0}}\n', steps: `  - {action: check, gate: ${gate}}\n`}),
    message: /defaults\.gate\.interval: expected at least 1 s between verdicts$/,
  },
  ...['0', '5', '9s'].map((v) => ({
    name: `gate window ${v} under the default interval`,
    text: runbook({steps: `  - {action: check, gate: {metric: error-rate, threshold: 2, window: ${v}}}\n`}),
    message: /gate\.window: expected a window of at least the interval \(10 s\), got \d+ s$/,
  })),
  {
    name: 'gate window under its interval',
    text: runbook({steps: `  - {action: check, gate: {metric: error-rate, threshold: 2, window: 30, interval: 60}}\n`}),
    message: /gate\.window: expected a window of at least the interval \(60 s\), got 30 s$/,
  },
  {
    name: 'defaults window under a step interval',
    text: runbook({defaults: 'defaults: {gate: {window: 20}}\n', steps: `  - {action: check, gate: {metric: error-rate, threshold: 2, interval: 30}}\n`}),
    message: /gate\.interval: expected a window of at least the interval \(30 s\), got 20 s$/,
  },
  ...['successes', 'failureLimit', 'inconclusiveLimit'].flatMap((field) =>
    ['101', '1e9'].map((v) => ({
      name: `gate ${field} ${v}`,
      text: runbook({steps: `  - {action: check, gate: {metric: error-rate, threshold: 2, ${field}: ${v}}}\n`}),
      message: new RegExp(`gate\\.${field}: expected a number <= 100$`),
    })),
  ),
  ...['successes', 'failureLimit'].map((field) => ({
    name: `gate ${field} 0`,
    text: runbook({steps: `  - {action: check, gate: {metric: error-rate, threshold: 2, ${field}: 0}}\n`}),
    message: new RegExp(`gate\\.${field}: expected a number >= 1$`),
  })),
  {
    name: 'gate successes × interval past a day',
    text: runbook({steps: `  - {action: check, gate: {metric: error-rate, threshold: 2, window: 3600, interval: 3600, successes: 50}}\n`}),
    message: /gate\.successes: expected successes × interval of at most 86400 s \(a day\), got 50 × 3600 s$/,
  },
  {
    name: 'gate threshold below 0',
    text: runbook({steps: `  - {action: check, gate: {metric: error-rate, threshold: -1}}\n`}),
    message: /gate\.threshold: expected a number >= 0$/,
  },
  {
    name: 'error-rate threshold over 100',
    text: runbook({steps: `  - {action: check, gate: {metric: error-rate, threshold: 101}}\n`}),
    message: /gate\.threshold: expected an error rate in % \(0–100\), got 101$/,
  },
  {
    name: 'healthy-targets threshold over 100',
    text: runbook({steps: `  - {action: check, gate: {metric: healthy-targets, threshold: 150}}\n`}),
    message: /gate\.threshold: expected a share of healthy targets in % \(0–100\), got 150$/,
  },

  // Schedules: counted before any weight is made.
  ...['1.00000001', '1.0001', '1.01'].map((f) => ({
    name: `exponential factor ${f}`,
    text: runbook({steps: `  - {action: ramp, set: mailbox, schedule: {exponential: {from: 1, factor: ${f}, to: 100}}}\n`}),
    message: /schedule\.exponential\.factor: expected at most 100 steps, but a factor of [\d.]+ from 1% to 100% makes \d+$/,
  })),
  {
    name: 'exponential factor 1',
    text: runbook({steps: '  - {action: ramp, set: mailbox, schedule: {exponential: {from: 1, factor: 1, to: 100}}}\n'}),
    message: /schedule\.exponential\.factor: expected a number > 1$/,
  },
  {
    name: 'exponential from 0',
    text: runbook({steps: '  - {action: ramp, set: mailbox, schedule: {exponential: {from: 0, factor: 2, to: 100}}}\n'}),
    message: /schedule\.exponential\.from: expected a start above 0 %, got 0$/,
  },
  {
    name: 'exponential to infinity',
    text: runbook({steps: '  - {action: ramp, set: mailbox, schedule: {exponential: {from: 1, factor: 2, to: .inf}}}\n'}),
    message: /schedule\.exponential\.to: .*expected number, received Infinity$/,
  },
  ...['1e10', '101', '1000000'].map((n) => ({
    name: `linear steps ${n}`,
    text: runbook({steps: `  - {action: ramp, set: mailbox, schedule: {linear: {from: 1, to: 100, steps: ${n}}}}\n`}),
    message: /schedule\.linear\.steps: expected a number <= 100$/,
  })),
  {
    name: 'linear steps 1',
    text: runbook({steps: '  - {action: ramp, set: mailbox, schedule: {linear: {from: 1, to: 100, steps: 1}}}\n'}),
    message: /schedule\.linear\.steps: expected a number >= 2$/,
  },
  {
    name: 'linear steps 2.5',
    text: runbook({steps: '  - {action: ramp, set: mailbox, schedule: {linear: {from: 1, to: 100, steps: 2.5}}}\n'}),
    message: /schedule\.linear\.steps: expected int, received number$/,
  },
  {
    name: 'linear to NaN',
    text: runbook({steps: '  - {action: ramp, set: mailbox, schedule: {linear: {from: 1, to: .nan, steps: 5}}}\n'}),
    message: /schedule\.linear\.to: expected number, received NaN$/,
  },
  {
    name: 'a list of 101 weights',
    text: runbook({steps: `  - {action: ramp, set: mailbox, schedule: [${Array.from({length: 101}, (_, i) => 1 + i * 0.98).join(', ')}]}\n`}),
    message: /schedule: expected at most 100 items$/,
  },
  {
    name: 'a weight of 0%',
    text: runbook({steps: '  - {action: ramp, set: mailbox, schedule: [0, 100]}\n'}),
    message: /schedule\[0\]: expected a weight of at least 1%, got 0%$/,
  },
  {
    name: 'a weight of 256%',
    text: runbook({steps: '  - {action: ramp, set: mailbox, schedule: [50, 256]}\n'}),
    message: /schedule\[1\]: expected a weight of at most 100%, got 256%$/,
  },
  {
    name: 'a linear ramp past 100%',
    text: runbook({steps: '  - {action: ramp, set: mailbox, schedule: {linear: {from: 10, to: 300, steps: 3}}}\n'}),
    message: /schedule: expected a weight of at most 100%, got 300%$/,
  },
  {
    name: 'a schedule that goes down',
    text: runbook({steps: '  - {action: ramp, set: mailbox, schedule: [50, 10]}\n'}),
    message: /schedule\[1\]: expected each step above the one before, got 10% after 50%$/,
  },

  // Batches and budgets: a share in (0, 100], a count within the pool.
  ...['0%', '0.0%', '150%', '100.5%', '1000%'].map((b) => ({
    name: `batch ${b}`,
    text: runbook({steps: `  - {action: cycle, pool: mailbox, batch: '${b}'}\n`}),
    message: /steps\[0\]\.batch: expected a share above 0% and at most 100%$/,
  })),
  ...['0%', '200%'].map((b) => ({
    name: `budget ${b}`,
    text: runbook({steps: `  - {action: cycle, pool: mailbox, batch: 1, budget: '${b}'}\n`}),
    message: /steps\[0\]\.budget: expected a share above 0% and at most 100%$/,
  })),
  ...['0', '-3'].map((b) => ({
    name: `batch ${b}`,
    text: runbook({steps: `  - {action: cycle, pool: mailbox, batch: ${b}}\n`}),
    message: /steps\[0\]\.batch: expected a number > 0$/,
  })),
  {
    name: 'batch 1.5',
    text: runbook({steps: '  - {action: cycle, pool: mailbox, batch: 1.5}\n'}),
    message: /steps\[0\]\.batch: expected int or string, got 1\.5$/,
  },
  ...['21', '1000', '1e9'].map((b) => ({
    name: `batch ${b} from a pool of 20`,
    text: runbook({steps: `  - {action: cycle, pool: mailbox, batch: ${b}}\n`}),
    message: /steps\[0\]\.batch: expected a batch of at most the pool's 20 targets, got \d+ in the rehearsal scenario outlook-recovery$/,
  })),
  {
    name: 'a batch larger than its budget',
    text: runbook({steps: '  - {action: cycle, pool: mailbox, batch: 5, budget: 3}\n'}),
    message: /steps\[0\]\.batch: a batch of 5 is larger than the disruption budget of 3$/,
  },
  {
    name: 'headroom over 100',
    text: runbook({steps: '  - {action: cycle, pool: mailbox, batch: 2, headroom: 150, capacityPerTarget: 100}\n'}),
    message: /steps\[0\]\.headroom: expected a number <= 100$/,
  },
  {
    name: 'headroom without capacityPerTarget',
    text: runbook({steps: '  - {action: cycle, pool: mailbox, batch: 2, headroom: 20}\n'}),
    message: /steps\[0\]\.headroom: a headroom guard needs capacityPerTarget/,
  },

  // What the ALB takes: slow start 0 or 30–900, routing failover 1–100.
  ...['10', '1', '29', '29.5', '901', '1h', '3600'].map((v) => ({
    name: `slowStart ${v}`,
    text: runbook({steps: `  - {action: cycle, pool: mailbox, batch: 2, slowStart: ${v}}\n`}),
    message: /steps\[0\]\.slowStart: expected 0 \(off\) or 30–900 s, the slow start an ALB takes$/,
  })),
  ...['0', '101', '-5'].map((v) => ({
    name: `failoverPercent ${v}`,
    text: runbook({steps: `  - {action: cycle, pool: mailbox, batch: 2, failoverPercent: ${v}}\n`}),
    message: /steps\[0\]\.failoverPercent: expected a number [<>]= (1|100)$/,
  })),
  {
    name: 'failoverPercent 50.5',
    text: runbook({steps: '  - {action: cycle, pool: mailbox, batch: 2, failoverPercent: 50.5}\n'}),
    message: /steps\[0\]\.failoverPercent: expected int, received number$/,
  },

  // Restrictions need something a listener rule can match.
  {
    name: 'a restriction with neither paths nor headers',
    text: runbook({steps: '  - {action: restrict, type: background-sync}\n'}),
    message: /steps\[0\]\.paths: expected paths or headers that identify background-sync traffic: a listener rule cannot match a traffic type by name$/,
  },
  {
    name: 'a restriction with empty paths and headers',
    text: runbook({steps: '  - {action: restrict, type: background-sync, paths: [], headers: {}}\n'}),
    message: /steps\[0\]\.paths: expected paths or headers that identify background-sync traffic/,
  },
  {
    name: 'a restriction path without a slash',
    text: runbook({steps: '  - {action: restrict, type: background-sync, paths: [sync/*]}\n'}),
    message: /steps\[0\]\.paths\[0\]: expected a path pattern starting with \/$/,
  },

  // Metrics sources: what a live run needs, refused before it runs.
  {
    name: 'cloudwatch without loadBalancer',
    text: runbook({
      targets: targets.replace('{source: cloudwatch, loadBalancer: app/edge/1}', '{source: cloudwatch}'),
      steps: `  - {action: check, gate: ${gate}}\n`,
    }),
    message: /targets\.metrics: expected loadBalancer \(the app\/NAME\/ID dimension\) for CloudWatch gates$/,
  },
  {
    name: 'cloudwatch without loadBalancer and no gate',
    text: runbook({targets: targets.replace('{source: cloudwatch, loadBalancer: app/edge/1}', '{source: cloudwatch}'), steps: '  - {action: wait, for: 1}\n'}),
    message: /targets\.metrics: expected loadBalancer/,
  },
  {
    name: 'prometheus without url',
    text: runbook({
      targets: targets.replace('{source: cloudwatch, loadBalancer: app/edge/1}', "{source: prometheus, queries: {error-rate: 'x'}}"),
      steps: `  - {action: check, gate: ${gate}}\n`,
    }),
    message: /targets\.metrics: expected url \(the Prometheus server\) for a Prometheus source$/,
  },
  {
    name: 'prometheus without queries',
    text: runbook({
      targets: targets.replace('{source: cloudwatch, loadBalancer: app/edge/1}', '{source: prometheus, url: http://prom:9090}'),
      steps: `  - {action: check, gate: ${gate}}\n`,
    }),
    message: /targets\.metrics\.queries: expected a query for error-rate: steps\[0\] reads it$/,
  },
  {
    name: 'prometheus without the gate metric query',
    text: runbook({
      targets: targets.replace('{source: cloudwatch, loadBalancer: app/edge/1}', "{source: prometheus, url: http://prom:9090, queries: {error-rate: 'x'}}"),
      steps: '  - {action: check, gate: {metric: latency-p99, threshold: 500}}\n',
    }),
    message: /targets\.metrics\.queries: expected a query for latency-p99: steps\[0\] reads it$/,
  },
  {
    name: 'prometheus headroom without request-rate',
    text: runbook({
      targets: targets.replace('{source: cloudwatch, loadBalancer: app/edge/1}', "{source: prometheus, url: http://prom:9090, queries: {error-rate: 'x'}}"),
      steps: '  - {action: cycle, pool: mailbox, batch: 2, headroom: 20, capacityPerTarget: 100}\n',
    }),
    message: /targets\.metrics\.queries: expected a query for request-rate: steps\[0\] reads it$/,
  },
  {
    name: 'prometheus url not http',
    text: runbook({
      targets: targets.replace('{source: cloudwatch, loadBalancer: app/edge/1}', "{source: prometheus, url: 'ftp://prom', queries: {error-rate: 'x'}}"),
      steps: `  - {action: check, gate: ${gate}}\n`,
    }),
    message: /targets\.metrics\.url: expected an http\(s\) URL$/,
  },

  // The rehearsal: it starts inside its scenario.
  ...['1500', '3000', '86400'].map((v) => ({
    name: `startAt ${v} in a 1500 s scenario`,
    text: runbook({rehearsal: `, startAt: ${v}`, steps: '  - {action: wait, for: 1}\n'}),
    message: /rehearsal\.startAt: expected a start before the end of the rehearsal scenario outlook-recovery \(1500 s\), got \d+ s$/,
  })),

  // Files that are not runbooks at all.
  {name: 'a NUL byte', text: 'name: corpus\n\0steps: []\n', message: /:2:1: a NUL character; expected text$/},
  {
    name: 'a NUL in a quoted string',
    text: runbook({steps: '  - {action: freeze, reason: "in\0cident"}\n'}),
    message: /:\d+:\d+: a NUL character; expected text$/,
  },
  {
    name: '!!js/function',
    text: runbook({steps: '  - {action: freeze, reason: !!js/function "function () { return 1 }"}\n'}),
    message: /:\d+:\d+: unknown tag: tag:yaml\.org,2002:js\/function; expected plain YAML values$/,
  },
  {
    name: '!!python/object',
    text: 'name: !!python/object:os.system corpus\nsteps: []\n',
    message: /:1:7: unknown tag: tag:yaml\.org,2002:python\/object:os\.system; expected plain YAML values$/,
  },
  {name: 'a local tag', text: 'name: !shell corpus\nsteps: []\n', message: /:1:7: unknown tag: !shell; expected plain YAML values$/},
  {
    name: 'an alias bomb',
    text: aliasBomb('corpus'),
    message: /:\d+:\d+: aliases expand to too many values \(more than 100 per alias\); expected plain values or a few aliases$/,
  },
  {name: 'an alias to nothing', text: 'name: *nothing\nsteps: []\n', message: /:1:7: malformed YAML: Unresolved alias/},
  {
    name: 'flow collections 100k deep',
    text: `name: corpus\nsteps: ${'['.repeat(100_000)}${']'.repeat(100_000)}\n`,
    message: /:2:\d+: flow collections nested more than 32 deep$/,
  },
  {
    name: 'a block 3000 deep',
    text: `name: corpus\nsteps:\n${Array.from({length: 3000}, (_, i) => `${' '.repeat(i + 2)}a:\n`).join('')}`,
    message: /:\d+:\d+: (malformed YAML|the file is)/,
  },
  {
    name: 'text over 1 MiB',
    text: `name: corpus\n# ${'x'.repeat(1024 * 1024)}\nsteps: []\n`,
    message: /:1:1: the file is \d+ bytes; expected at most 1048576 bytes \(1 MiB\)$/,
  },
  {
    name: 'invalid UTF-8',
    text: bytes('name: corpus\nsteps:\n  - {action: freeze, reason: caf', [0xc3, 0x28], '}\n'),
    message: /:3:33: invalid UTF-8 at byte 52; expected a UTF-8 text file$/,
  },
  {name: 'a lone continuation byte', text: bytes('name: co', [0x80], 'rpus\n'), message: /:1:9: invalid UTF-8 at byte 8; expected a UTF-8 text file$/},
  {
    name: 'a truncated sequence at the end',
    text: bytes('name: corpus\n', [0xe2, 0x82]),
    message: /:2:1: invalid UTF-8 at byte 13; expected a UTF-8 text file$/,
  },
  {
    name: 'Latin-1',
    text: bytes('name: corpus\ndescription: r', [0xe9], 'sum', [0xe9], '\n'),
    message: /:2:15: invalid UTF-8 at byte 27; expected a UTF-8 text file$/,
  },
  {name: 'UTF-16', text: bytes([0xff, 0xfe], 'n\0a\0'), message: /:1:1: invalid UTF-8 at byte 0; expected a UTF-8 text file$/},
  {name: 'a duplicate key', text: 'name: a\nname: b\nsteps: []\n', message: /:2:1: malformed YAML: Map keys must be unique$/},
]

function bytes(...parts: Array<string | number[]>): Uint8Array {
  return Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p) : Buffer.from(p))))
}

// ── scenarios ───────────────────────────────────────────────────────────────────────────────

const scenario = (extra: string, pool = 'servers: 20, capacity: 100'): string => `name: corpus
${extra}pools:
  - {name: web, ${pool}}
demand: {rps: 1500}
setups: {no-guard: {}}
`

const scenarioCases: FileCase[] = [
  ...['0.000001', '0.001', '0', '-1'].map((t) => ({name: `tick ${t}`, text: scenario(`tick: ${t}\n`), message: /tick: expected a number >= 0\.01$/})),
  {name: 'tick 3600', text: scenario('tick: 3600\n'), message: /tick: expected a number <= 60$/},
  ...['1e12', '3600001', '1e9'].map((d) => ({
    name: `duration ${d}`,
    text: scenario(`duration: ${d}\n`),
    message: /duration: expected at most 3600000 s \(1,000 h\)$/,
  })),
  {name: 'duration 0', text: scenario('duration: 0\n'), message: /duration: expected a number > 0$/},
  ...['1e8', '100001'].map((n) => ({
    name: `servers ${n}`,
    text: scenario('', `servers: ${n}, capacity: 100`),
    message: /pools\[0\]\.servers: expected a number <= 100000$/,
  })),
  {
    name: 'a day of 100000 servers',
    text: scenario('duration: 86400\n', 'servers: 100000, capacity: 100'),
    message: /duration: expected at most 1e\+9 servers × ticks to simulate, got 8\.64e\+9: fewer servers, a shorter duration or a coarser tick$/,
  },
  // The record is bounded, so length alone no longer fills memory; at 10 ms ticks it is the work that runs out.
  {
    name: '1,000 h at 10 ms ticks',
    text: scenario('duration: 3600000\ntick: 0.01\n', 'servers: 10, capacity: 100'),
    message: /duration: expected at most 1e\+9 servers × ticks to simulate, got 3\.60e\+9/,
  },
  {
    name: 'client waits of a day at 10 ms ticks',
    text: scenario(
      'duration: 60\ntick: 0.01\nclients: {attempts: 10, timeout: 86400, backoffMax: 86400}\ndemand: {rps: 1, types: {a: 0.1, b: 0.1, c: 0.1, d: 0.1, e: 0.1, f: 0.1, g: 0.1, h: 0.1, i: 0.1, j: 0.1}}\n',
      'servers: 10, capacity: 100',
    ).replace('demand: {rps: 1500}\n', ''),
    message: /tick: expected a simulation of at most 64 Mi numbers in memory/,
  },
  {name: 'a client timeout of 1e9', text: scenario('clients: {timeout: 1e9}\n'), message: /clients\.timeout: expected a number <= 86400$/},
  {name: 'a health check interval of 0', text: scenario('healthCheck: {interval: 0}\n'), message: /healthCheck\.interval: expected a number > 0$/},
  {
    name: 'a restart of 1e9 s',
    text: scenario('', 'servers: 20, capacity: 100, restartSeconds: 1e9'),
    message: /pools\[0\]\.restartSeconds: expected a number <= 86400$/,
  },
  {name: 'a DNS TTL of 1e9', text: scenario('dns: {ttl: 1e9}\n'), message: /dns\.ttl: expected a number <= 86400$/},
  {
    name: 'a slow start policy of 1e9',
    text: scenario('').replace('no-guard: {}', 'no-guard: {slowStart: 1e9}'),
    message: /setups\.no-guard\.slowStart: expected a number <= 86400$/,
  },
  {name: 'a scenario with a NUL', text: `name: corpus\0\n`, message: /:1:13: a NUL character; expected text$/},
  {
    name: 'a scenario with !!js/function',
    text: scenario('').replace('name: corpus', 'name: !!js/function corpus'),
    message: /:1:7: unknown tag: tag:yaml\.org,2002:js\/function/,
  },
  {name: 'a scenario alias bomb', text: aliasBomb('corpus'), message: /aliases expand to too many values/},
  {name: 'a scenario in Latin-1', text: bytes('name: caf', [0xe9], '\n'), message: /:1:10: invalid UTF-8 at byte 9; expected a UTF-8 text file$/},
]

// ── flags ───────────────────────────────────────────────────────────────────────────────────

interface FlagCase {
  args: string[]
  /** The flag the message must name. */
  flag: string
  message: RegExp
}

const rehearse = ['--dry-run', '--scenario', 'outlook-recovery']
const ramp = (...more: string[]) => ['ramp', '--set', 'mailbox', '--schedule', '50,100', ...rehearse, ...more]
const cycle = (...more: string[]) => ['cycle', '--pool', 'mailbox', '--batch', '2', ...rehearse, ...more]
const gateFlags = ['--gate-metric', 'error-rate', '--gate-threshold', '2']
const aDay = /expected at most 86400 s \(a day\) but received: /

const flagCases: FlagCase[] = [
  ...['1e9', '1e12', '25h', '100000'].map((v) => ({args: ramp('--bake', v), flag: '--bake', message: aDay})),
  ...['1e9', '48h'].map((v) => ({args: cycle('--bake', v), flag: '--bake', message: aDay})),
  {args: ramp('--bake', 'forever'), flag: '--bake', message: /expected a duration such as 90, 90s, 5m or 1h but received: forever$/},
  {args: cycle('--slow-start', '10'), flag: '--slow-start', message: /--slow-start: expected 0 \(off\) or 30–900 s, the slow start an ALB takes$/},
  {args: cycle('--slow-start', '1000'), flag: '--slow-start', message: /--slow-start: expected 0 \(off\) or 30–900 s, the slow start an ALB takes$/},
  {args: cycle('--failover-percent', '0'), flag: '--failover-percent', message: /Expected an integer greater than or equal to 1|greater than or equal to 1/},
  {args: cycle('--failover-percent', '101'), flag: '--failover-percent', message: /less than or equal to 100/},
  {args: ['cycle', '--pool', 'mailbox', '--batch', '0%', ...rehearse], flag: '--batch', message: /expected a share above 0% and at most 100%/},
  {args: ['cycle', '--pool', 'mailbox', '--batch', '150%', ...rehearse], flag: '--batch', message: /expected a share above 0% and at most 100%/},
  {args: ['cycle', '--pool', 'mailbox', '--batch', '21', ...rehearse], flag: '--batch', message: /expected a batch of at most the pool's 20 targets, got 21/},
  {
    args: ['cycle', '--pool', 'mailbox', '--batch', '2', '--budget', '0%', ...rehearse],
    flag: '--budget',
    message: /expected a share above 0% and at most 100%/,
  },
  {args: cycle('--headroom', '150', '--capacity-per-target', '100'), flag: '--headroom', message: /less than or equal to 100/},
  {args: ramp(...gateFlags, '--gate-interval', '1e9'), flag: '--gate-interval', message: aDay},
  ...['0', '0.5'].map((v) => ({args: ramp(...gateFlags, '--gate-interval', v), flag: '--gate-interval', message: /expected at least 1 s between verdicts$/})),
  {args: ramp(...gateFlags, '--gate-window', '5'), flag: '--gate-window', message: /expected a window of at least the interval \(10 s\), got 5 s$/},
  {args: ramp(...gateFlags, '--gate-window', '0'), flag: '--gate-window', message: /expected a window of at least the interval \(10 s\), got 0 s$/},
  {args: ramp(...gateFlags, '--gate-window', '1e9'), flag: '--gate-window', message: aDay},
  {args: ramp(...gateFlags, '--gate-successes', '1000'), flag: '--gate-successes', message: /expected a number <= 100$/},
  {args: ramp('--gate-metric', 'error-rate', '--gate-threshold', '-1'), flag: '--gate-threshold', message: /greater than or equal to 0/},
  {args: ['ramp', '--set', 'mailbox', '--schedule', '0,100', ...rehearse], flag: '--schedule', message: /expected a weight of at least 1%, got 0%/},
  {args: ['ramp', '--set', 'mailbox', '--schedule', '50,256', ...rehearse], flag: '--schedule', message: /expected a weight of at most 100%, got 256%/},
  {
    args: ['ramp', '--set', 'mailbox', '--schedule', Array.from({length: 101}, (_, i) => 1 + i * 0.98).join(','), ...rehearse],
    flag: '--schedule',
    message: /expected at most 100 items/,
  },
  {args: ramp('--start-at', '1e9'), flag: '--start-at', message: aDay},
  {
    args: ramp('--start-at', '2000'),
    flag: '--start-at',
    message: /expected a start before the end of the rehearsal scenario outlook-recovery \(1500 s\), got 2000 s$/,
  },
  ...['0', '-1', '0.0001'].map((v) => ({args: ramp('--pace', v), flag: '--pace', message: /expected a number greater than or equal to 0\.001 but received: /})),
  {args: ['restrict', '--type', 'background-sync', ...rehearse], flag: '--path', message: /expected paths or headers that identify background-sync traffic/},
  {args: ['restrict', '--type', 'background-sync', '--path', '/sync/*', '--retry-after', '1e9', ...rehearse], flag: '--retry-after', message: aDay},
  {args: ['freeze', '--reason', 'incident', '--expires', '1e9', '--dry-run'], flag: '--expires', message: aDay},
  {
    args: ['freeze', '--reason', 'incident', '--expires', '30d', '--dry-run'],
    flag: '--expires',
    message: /expected a duration such as 90, 90s, 5m or 1h but received: 30d$/,
  },
  {args: ['run', 'outlook-staged-return', '--dry-run', '--pace', '0'], flag: '--pace', message: /greater than or equal to 0\.001/},
  {args: ['run', 'outlook-staged-return', '--dry-run', '--pace', '-1'], flag: '--pace', message: /greater than or equal to 0\.001/},
  // simulate: the scenario's bounds, named by flag.
  {args: ['simulate', '--duration', '1e12'], flag: '--duration', message: /expected at most 3600000/},
  {args: ['simulate', '--duration', '3600001'], flag: '--duration', message: /expected at most 3600000 s/},
  {args: ['simulate', '--duration', '0'], flag: '--duration', message: /expected at least 0\.01 s but received: 0$/},
  {args: ['simulate', '--servers', '100000000'], flag: '--servers', message: /less than or equal to 100000/},
  {args: ['simulate', '--servers', '0'], flag: '--servers', message: /greater than or equal to 1/},
  {args: ['simulate', '--broken', '100000000'], flag: '--broken', message: /less than or equal to 100000/},
  {args: ['simulate', '--fault-at', '1e9'], flag: '--fault-at', message: /expected at most 3600000/},
  {args: ['simulate', '--fix-at', '1e12'], flag: '--fix-at', message: /expected at most 3600000/},
  {args: ['simulate', '--servers', '100000', '--duration', '86400'], flag: '--duration', message: /expected at most 1e\+9 servers × ticks to simulate/},
  {args: ['simulate', '--policy', 'slowStart=1e9'], flag: '--policy', message: /slowStart: .*86400/},
  {args: ['simulate', '--capacity', '-1'], flag: '--capacity', message: /expected a number > 0$/},
  {args: ['simulate', '--demand', '-5'], flag: '--demand', message: /expected a number >= 0$/},
]

// ── the checks ──────────────────────────────────────────────────────────────────────────────

function expectPromptFileRefusal(file: string, message: RegExp, check: () => void): void {
  const started = performance.now()
  const error = inputErrorOf(check)
  const elapsed = performance.now() - started
  expect(elapsed).toBeLessThan(promptMs)
  expect(error.problems.length).toBeGreaterThan(0)
  const escaped = file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  for (const line of error.problems) expect(line).toMatch(new RegExp(`^${escaped}:\\d+:\\d+: `))
  expect(
    error.problems.some((line) => message.test(line)),
    error.message,
  ).toBe(true)
  expect(error.message).not.toMatch(/TypeError|RangeError|ReferenceError|\n\s+at /)
}

const slug = (name: string) => name.replace(/[^a-z0-9]+/gi, '-').toLowerCase()

describe('the corpus of malformed inputs: each is bad input, located, said, and prompt', () => {
  // oclif loads its commands on the first call; that is start-up, not the refusal being timed.
  beforeAll(async () => {
    await sluiceInProcess(['validate', '--help'])
  })

  it('holds at least 150 cases', () => {
    expect(runbookCases.length + scenarioCases.length + flagCases.length).toBeGreaterThanOrEqual(150)
  })

  it.each(runbookCases.map((c) => [c.name, c] as const))('runbook: %s', (_name, c) => {
    const file = join(dir, `${slug(c.name)}.yaml`)
    expectPromptFileRefusal(file, c.message, () => validateRunbook(file, c.text))
  })

  it.each(scenarioCases.map((c) => [c.name, c] as const))('scenario: %s', (_name, c) => {
    const file = join(dir, `scenario-${slug(c.name)}.yaml`)
    writeFileSync(file, c.text)
    expectPromptFileRefusal(file, c.message, () => loadScenario(file))
  })

  it.each(flagCases.map((c) => [c.args.join(' '), c] as const))('flags: sluice %s', async (_name, c) => {
    const started = performance.now()
    const {exit, stdout, stderr, error} = await sluiceInProcess(c.args)
    expect(performance.now() - started).toBeLessThan(promptMs)
    expect(exit, stderr).toBe(2)
    expect(stdout).toBe('')
    const lines = stderr.trimEnd().split('\n')
    expect(lines, stderr).toHaveLength(1)
    expect(lines[0].startsWith(`Error: ${c.flag}`), lines[0]).toBe(true)
    expect(lines[0]).toMatch(c.message)
    expect(stderr).not.toMatch(/TypeError|RangeError|\bat .*\.js:\d+/)
    expect(error?.message ?? '').not.toMatch(/TypeError|RangeError/)
  })
})
