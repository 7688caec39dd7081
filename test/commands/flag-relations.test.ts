import {Config} from '@oclif/core'
import {describe, expect, it} from 'vitest'
import {relationProblems} from '../../src/cli/flag-relations.js'
import {root, sluiceInProcess} from '../helpers/command.js'

// Flag relations are declared on the flags with oclif (src/cli/flag-relations.ts): oclif refuses
// a broken one while it parses, sluice words the refusal (which flags, and why) and help says each
// relation beside its flag. Every relation declared is refused here, and shown in help.

/** A refusal: exit 2, nothing on stdout, and each line `Error: LINE` on stderr, no stack trace. */
async function refused(args: string[]): Promise<string[]> {
  const {exit, stdout, stderr} = await sluiceInProcess(args)
  expect(exit, stderr).toBe(2)
  expect(stdout).toBe('')
  expect(stderr).not.toMatch(/\bat .*\.js:\d+/)
  const lines = stderr.trimEnd().split('\n')
  for (const line of lines) expect(line).toMatch(/^Error: /)
  return lines.map((line) => line.slice('Error: '.length))
}

const calibrateOnePool = 'calibrate reads one pool: an ALB target group and its CloudWatch metrics, a HAProxy backend, or Prometheus through a mapping'
const assessOneLive = 'read one live pool: an ALB target group, a HAProxy backend or Prometheus, not both'
const rehearsal = 'only for a rehearsal: add --dry-run to rehearse, or leave the rehearsal flags out to run live'
const haproxyTarget =
  "a HAProxy target is its Runtime API, the restriction map its config names and the backends gates read, together (as a runbook's targets.haproxy)"
const weightedRecord = 'the hosted zone, the weighted record and its set identifiers name the weights together'
const alb = ['--target-group', 'arn:aws:elasticloadbalancing:eu-west-1:123:targetgroup/mailbox/abc', '--load-balancer', 'app/edge/def']
const haproxy = ['--haproxy', '/run/haproxy.sock', '--backend', 'mailbox']
const prometheus = ['--prometheus', 'http://prometheus:9090', '--mapping', 'mailbox-prometheus.yaml']
const described = ['--demand', '1500', '--in-rotation', '14']
const live = ['--type', 'sync', '--path', '/sync/']

// [argv, the one line it is refused with]: each relation broken alone.
const refusals: Array<[string[], string]> = [
  // calibrate: one pool, named by a pair of flags
  [['calibrate'], `missing one of --target-group and --load-balancer, --haproxy and --backend, or --prometheus and --mapping; ${calibrateOnePool}`],
  [['calibrate', alb[0], alb[1]], '--target-group: needs --load-balancer; an ALB pool is named by both --target-group and --load-balancer'],
  [['calibrate', alb[2], alb[3]], '--load-balancer: needs --target-group; an ALB pool is named by both --target-group and --load-balancer'],
  [['calibrate', haproxy[0], haproxy[1]], '--haproxy: needs --backend; a HAProxy pool is named by both --haproxy SOCKET and --backend NAME'],
  [['calibrate', haproxy[2], haproxy[3]], '--backend: needs --haproxy; a HAProxy pool is named by both --haproxy SOCKET and --backend NAME'],
  [['calibrate', prometheus[0], prometheus[1]], '--prometheus: needs --mapping; a Prometheus pool is named by both --prometheus URL and --mapping FILE'],
  [['calibrate', prometheus[2], prometheus[3]], '--mapping: needs --prometheus; a Prometheus pool is named by both --prometheus URL and --mapping FILE'],
  [['calibrate', ...alb, ...haproxy], `--target-group: not with --haproxy or --backend; ${calibrateOnePool}`],
  [['calibrate', ...alb, ...prometheus], `--target-group: not with --prometheus or --mapping; ${calibrateOnePool}`],
  [['calibrate', ...haproxy, ...prometheus], `--haproxy: not with --prometheus or --mapping; ${calibrateOnePool}`],
  [
    ['calibrate', ...prometheus, '--haproxy-config', 'h.cfg'],
    "--haproxy-config: needs --haproxy and --backend; it is read for a HAProxy pool, beside what that HAProxy's Runtime API shows",
  ],
  [
    ['calibrate', ...haproxy, '--until', '2026-12-04T06:00:00Z'],
    '--until: not with --haproxy or --backend; HAProxy keeps counters, not history; calibrate samples it from now for --window',
  ],
  // assess: one pool, read live or described
  [
    ['assess', '-s', 'outlook-2026'],
    'missing one of --target-group and --load-balancer, --haproxy and --backend, --prometheus and --mapping, or --demand and --in-rotation; assess places one pool: one it reads live (an ALB target group, a HAProxy backend or Prometheus), or one described',
  ],
  [['assess', '-s', 'outlook-2026', alb[0], alb[1]], '--target-group: needs --load-balancer; a live pool is named by both --target-group and --load-balancer'],
  [['assess', '-s', 'outlook-2026', alb[2], alb[3]], '--load-balancer: needs --target-group; a live pool is named by both --target-group and --load-balancer'],
  [['assess', '-s', 'outlook-2026', haproxy[0], haproxy[1]], '--haproxy: needs --backend; a HAProxy pool is named by both --haproxy and --backend'],
  [['assess', '-s', 'outlook-2026', haproxy[2], haproxy[3]], '--backend: needs --haproxy; a HAProxy pool is named by both --haproxy and --backend'],
  [
    ['assess', '-s', 'outlook-2026', prometheus[0], prometheus[1]],
    '--prometheus: needs --mapping; a Prometheus pool is named by both --prometheus URL and --mapping FILE',
  ],
  [['assess', '-s', 'outlook-2026', described[0], described[1]], '--demand: needs --in-rotation; a described pool needs both --demand and --in-rotation'],
  [['assess', '-s', 'outlook-2026', described[2], described[3]], '--in-rotation: needs --demand; a described pool needs both --demand and --in-rotation'],
  [['assess', '-s', 'outlook-2026', ...alb, ...haproxy], `--target-group: not with --haproxy or --backend; ${assessOneLive}`],
  [['assess', '-s', 'outlook-2026', ...haproxy, ...prometheus], `--haproxy: not with --prometheus or --mapping; ${assessOneLive}`],
  [
    ['assess', '-s', 'outlook-2026', ...prometheus, ...described],
    '--demand: not with --prometheus or --mapping; describe a pool (--demand, --in-rotation) or read a live one, not both',
  ],
  [
    ['assess', '-s', 'outlook-2026', ...described, '--watch', '10'],
    '--watch: needs --target-group and --load-balancer, --haproxy and --backend, or --prometheus and --mapping; it re-assesses a live pool',
  ],
  [
    ['assess', '-s', 'outlook-2026', ...described, '--quick', '--svg', 'map.svg'],
    '--svg: not with --quick; it saves the map, which --quick leaves out; drop one of them',
  ],
  [
    ['assess', '-s', 'outlook-2026', ...described, '--quick', '--html', 'map.html'],
    '--html: not with --quick; it saves the map, which --quick leaves out; drop one of them',
  ],
  // abort: the way back's flags need the way back
  [
    ['abort', 'RUN', '--now'],
    '--now: needs --rollback; --now says how the rollback moves weights back (at once), and abort rolls the run back only with --rollback',
  ],
  [
    ['abort', 'RUN', '--from-live'],
    '--from-live: needs --rollback; --from-live says what the rollback plans from, and abort rolls the run back only with --rollback',
  ],
  [
    ['abort', 'RUN', '--ungated'],
    '--ungated: needs --rollback; --ungated says whether the rollback may take weights back ungated, and abort rolls the run back only with --rollback',
  ],
  // simulate (journal --markdown --json: under --json, below)
  [
    ['simulate', '--compare', '--setup', 'no-guard'],
    '--compare: not with --setup; it runs every setup the scenario declares; leave out --setup, or drop --compare',
  ],
  [['simulate', '--workers', '2'], '--workers: needs --sweep; it sets the threads of a sweep'],
  // lift: a gate and a bake judge the steps of a lift by degrees
  [
    ['lift', '--type', 'sync', '--bake', '60'],
    '--bake: needs --schedule; a gate and a bake judge each step of a lift by degrees, and a lift without --schedule is one step at once',
  ],
  [
    ['lift', '--type', 'sync', '--gate-metric', 'error-rate', '--gate-threshold', '2'],
    '--gate-metric: needs --schedule; a gate and a bake judge each step of a lift by degrees, and a lift without --schedule is one step at once',
  ],
  // the gate's settings need its metric (ramp, cycle, lift)
  ...(['gate-interval', 'gate-window'] as const).map((flag): [string[], string] => [
    ['ramp', '--set', 'west', '--schedule', '1,100', '--dry-run', `--${flag}`, '30'],
    `--${flag}: needs --gate-metric; the metric says what the gate measures`,
  ]),
  [['cycle', '--pool', 'east', '--batch', '2', '--dry-run', '--gate-pool', 'east'], '--gate-pool: needs --gate-metric; the metric says what the gate measures'],
  [
    ['cycle', '--pool', 'east', '--batch', '2', '--dry-run', '--gate-successes', '2'],
    '--gate-successes: needs --gate-metric; the metric says what the gate measures',
  ],
  [
    ['lift', '--type', 'sync', '--schedule', '50,100', '--dry-run', '--gate-threshold', '2'],
    '--gate-threshold: needs --gate-metric; the metric says what the gate measures',
  ],
  // a weighted record is named by three flags (ramp); a HAProxy target by three (restrict, lift)
  [['ramp', '--set', 'west', '--schedule', '1,100', '--zone', 'Z1'], `--zone: needs --record and --sets; ${weightedRecord}`],
  [['ramp', '--set', 'west', '--schedule', '1,100', '--record', 'api.example.com'], `--record: needs --zone and --sets; ${weightedRecord}`],
  [['ramp', '--set', 'west', '--schedule', '1,100', '--sets', 'east,west'], `--sets: needs --zone and --record; ${weightedRecord}`],
  [['restrict', ...live, '--haproxy-socket', '/run/haproxy.sock'], `--haproxy-socket: needs --restrict-map and --backend; ${haproxyTarget}`],
  [['restrict', ...live, '--haproxy-socket', '/run/haproxy.sock', '--restrict-map', 'r.map'], `--haproxy-socket: needs --backend; ${haproxyTarget}`],
  [['lift', '--type', 'sync', '--restrict-map', 'r.map'], `--restrict-map: needs --haproxy-socket; ${haproxyTarget}`],
  // a rehearsal's flags need --dry-run (run and the single actions)
  ...(
    [
      ['--pace', '60'],
      ['--scenario', 'outlook-2026'],
      ['--setup', 'no-guard'],
      ['--rollback', 'ramped'],
      ['--svg', 'chart.svg'],
      ['--html', 'report.html'],
    ] as const
  ).map(([flag, value]): [string[], string] => [['run', 'outlook-staged-return', flag, value], `${flag}: needs --dry-run; ${rehearsal}`]),
  [['cycle', '--pool', 'east', '--batch', '2', '--start-at', '30'], `--start-at: needs --dry-run; ${rehearsal}`],
  [['ramp', '--set', 'west', '--schedule', '1,100', '--pace', '60'], `--pace: needs --dry-run; ${rehearsal}`],
  [['restrict', ...live, '--svg', 'chart.svg'], `--svg: needs --dry-run; ${rehearsal}`],
  [['lift', '--type', 'sync', '--scenario', 'outlook-recovery'], `--scenario: needs --dry-run; ${rehearsal}`],
]

describe('a broken flag relation is bad input naming the flags and why (in process)', () => {
  it.each(refusals)('%j', async (args, line) => {
    expect(await refused(args)).toEqual([line])
  })

  it('several flags breaking one rule are named on one line', async () => {
    expect(await refused(['run', 'outlook-staged-return', '--pace', '60', '--html', 'report.html'])).toEqual([`--pace, --html: need --dry-run; ${rehearsal}`])
    expect(await refused(['ramp', '--set', 'west', '--schedule', '1,100', '--zone', 'Z1', '--record', 'api.example.com'])).toEqual([
      `--record, --zone: need --sets; ${weightedRecord}`,
    ])
    expect(await refused(['lift', '--type', 'sync', '--gate-metric', 'error-rate', '--bake', '60'])).toEqual([
      '--gate-metric, --bake: need --schedule; a gate and a bake judge each step of a lift by degrees, and a lift without --schedule is one step at once',
    ])
    // Four flags of two pools break "one pool" four ways: said once, with all the first flag clashes with.
    expect(await refused(['calibrate', ...haproxy, ...alb])).toEqual([`--target-group: not with --haproxy or --backend; ${calibrateOnePool}`])
  })

  it('every rule broken is said in one pass, a line each, a required flag among them', async () => {
    expect(await refused(['lift', '--bake', '60', '--pace', '2'])).toEqual([
      '--type: missing; this flag is required',
      `--pace: needs --dry-run; ${rehearsal}`,
      '--bake: needs --schedule; a gate and a bake judge each step of a lift by degrees, and a lift without --schedule is one step at once',
    ])
    expect(await refused(['calibrate', '--mapping', 'm.yaml', alb[0], alb[1]])).toEqual([
      `--target-group: not with --mapping; ${calibrateOnePool}`,
      '--target-group: needs --load-balancer; an ALB pool is named by both --target-group and --load-balancer',
      '--mapping: needs --prometheus; a Prometheus pool is named by both --prometheus URL and --mapping FILE',
    ])
  })

  it('under --json: the error object on stdout with each line in problems, exit 2, nothing on stderr', async () => {
    const json = async (args: string[]) => {
      const {exit, stdout, stderr} = await sluiceInProcess([...args, '--json'])
      expect(exit, stderr).toBe(2)
      expect(stderr).toBe('')
      return JSON.parse(stdout) as unknown
    }
    const problems = [
      '--now: needs --rollback; --now says how the rollback moves weights back (at once), and abort rolls the run back only with --rollback',
      '--ungated: needs --rollback; --ungated says whether the rollback may take weights back ungated, and abort rolls the run back only with --rollback',
    ]
    expect(await json(['abort', 'RUN', '--now', '--ungated'])).toEqual({error: {message: problems.join('\n'), exit: 2, problems}})
    const markdown = '--markdown: not with --json; --markdown prints the timeline as Markdown, --json the journal entries as JSON; choose one'
    expect(await json(['journal', 'RUN', '--markdown'])).toEqual({error: {message: markdown, exit: 2, problems: [markdown]}})
  })

  it('no flag value is echoed (oclif says --a=VALUE), so a secret in one stays out of the error', async () => {
    const [line] = await refused(['calibrate', '--target-group', 'arn:secret-token-123', '--load-balancer', 'app/a/b', ...haproxy])
    expect(line).toBe(`--target-group: not with --haproxy or --backend; ${calibrateOnePool}`)
  })

  it("keeps oclif's own message where it cannot word one: another error, or a relation not declared with related()", () => {
    expect(relationProblems(new Error('Nonexistent flag: --x'))).toBeUndefined()
    const failure = (flags: Record<string, object>) =>
      Object.assign(new Error('The following error occurred:\n  Only the following can be provided when using --a: --b'), {
        parse: {input: {flags}, output: {flags: {a: 'x', c: 'y'}}},
      })
    expect(relationProblems(failure({a: {combinable: ['b']}, c: {}}))).toBeUndefined()
    expect(relationProblems(failure({a: {exclusive: ['c']}, c: {}}))).toBeUndefined()
    expect(relationProblems(failure({a: {exclusive: ['c'], whyRelated: {exclusive: 'one or the other'}}, c: {}}))).toEqual([
      '--a: not with --c; one or the other',
    ])
  })
})

/** A flag's entry in a command's help, on one line. */
async function helpOf(command: string, flag: string): Promise<string> {
  const {exit, stdout} = await sluiceInProcess([command, '--help'])
  expect(exit).toBe(0)
  const lines = stdout.split('\n')
  const label = new RegExp(`^ {2,6}(-\\w, )?--${flag}(=\\S+)?( {2,}|$)`)
  const start = lines.findIndex((line) => label.test(line))
  expect(start, `${command} --help lists --${flag}`).toBeGreaterThanOrEqual(0)
  // oclif lays flags out as a table (description beside the label, continued far right) or, when
  // a label is long, as entries (description below it) parted by blank lines.
  const table = lines[start].replace(label, '').trim() !== ''
  const end = lines.findIndex((line, k) => k > start && (table ? !/^ {10,}\S/.test(line) : line.trim() === ''))
  return lines.slice(start, end).join(' ').replace(/\s+/g, ' ').trim()
}

// [command, flag, what its help says of its relations]
const notes: Array<[string, string, string[]]> = [
  [
    'calibrate',
    'target-group',
    [
      'Needs --load-balancer.',
      'Not with --haproxy, --backend, --prometheus or --mapping.',
      'Exactly one of --target-group, --haproxy or --prometheus is needed.',
    ],
  ],
  ['calibrate', 'load-balancer', ['Needs --target-group.', 'Not with --haproxy, --backend, --prometheus or --mapping.']],
  ['calibrate', 'haproxy', ['Needs --backend.', 'Not with --target-group, --load-balancer, --prometheus or --mapping.', 'Exactly one of']],
  ['calibrate', 'backend', ['Needs --haproxy.']],
  ['calibrate', 'prometheus', ['Needs --mapping.', 'Not with --target-group, --load-balancer, --haproxy or --backend.', 'Exactly one of']],
  ['calibrate', 'mapping', ['Needs --prometheus.', 'Not with --target-group, --load-balancer, --haproxy or --backend.']],
  ['calibrate', 'haproxy-config', ['Needs --haproxy and --backend.']],
  ['calibrate', 'until', ['Not with --haproxy or --backend.']],
  ['assess', 'target-group', ['Needs --load-balancer.', 'Exactly one of --target-group, --haproxy, --prometheus or --demand is needed.']],
  ['assess', 'haproxy', ['Needs --backend.']],
  ['assess', 'prometheus', ['Needs --mapping.']],
  ['assess', 'demand', ['Needs --in-rotation.', 'Not with --target-group, --load-balancer, --haproxy, --backend, --prometheus or --mapping.']],
  ['assess', 'in-rotation', ['Needs --demand.']],
  ['assess', 'watch', ['Needs --target-group, --haproxy or --prometheus.']],
  ['assess', 'svg', ['Not with --quick.']],
  ['assess', 'html', ['Not with --quick.']],
  ['abort', 'now', ['Needs --rollback.']],
  ['abort', 'from-live', ['Needs --rollback.']],
  ['abort', 'ungated', ['Needs --rollback.']],
  ['journal', 'markdown', ['Not with --json.']],
  ['simulate', 'compare', ['Not with --setup.']],
  ['simulate', 'workers', ['Needs --sweep.']],
  ['lift', 'bake', ['Needs --schedule.']],
  ['lift', 'gate-metric', ['Needs --schedule.']],
  ['lift', 'restrict-map', ['Needs --haproxy-socket.']],
  ['ramp', 'gate-threshold', ['Needs --gate-metric.']],
  ['cycle', 'gate-window', ['Needs --gate-metric.']],
  ['ramp', 'zone', ['Needs --record and --sets.']],
  ['ramp', 'record', ['Needs --zone and --sets.']],
  ['ramp', 'sets', ['Needs --zone and --record.']],
  ['restrict', 'haproxy-socket', ['Needs --restrict-map and --backend.']],
  ...['pace', 'scenario', 'setup', 'rollback', 'svg', 'html'].map((flag): [string, string, string[]] => ['run', flag, ['Needs --dry-run.']]),
  ...['ramp', 'cycle', 'restrict', 'lift'].map((command): [string, string, string[]] => [command, 'start-at', ['Needs --dry-run.']]),
]

describe('help says each relation beside its flag (in process)', () => {
  it.each(notes)('%s --help: --%s', async (command, flag, said) => {
    const entry = await helpOf(command, flag)
    for (const note of said) expect(entry).toContain(note)
  })

  it('says no relation a command does not have', async () => {
    // A ramp's gate needs no schedule (it always has one), and tune, which always rehearses, has no --dry-run.
    expect(await helpOf('ramp', 'gate-metric')).not.toContain('Needs')
    expect(await helpOf('tune', 'scenario')).not.toContain('Needs --dry-run')
    expect(await helpOf('rollback', 'now')).not.toContain('Needs --rollback')
  })

  it('keeps the usage line flat: oclif would group related flags there, and garble the overlapping ones', async () => {
    const {stdout} = await sluiceInProcess(['calibrate', '--help'])
    const usage = stdout.slice(stdout.indexOf('USAGE'), stdout.indexOf('FLAGS')).replace(/\s+/g, ' ')
    expect(usage).toContain('[--target-group ARN] [--load-balancer app/NAME/ID] [--haproxy SOCKET] [--backend NAME]')
    expect(usage).toContain('[--until TIME]')
    expect(usage).not.toContain('|')
  })
})

describe('every relation is declared so that oclif can hold it', () => {
  it('names flags the command has, says why, and depends on no flag with a default', async () => {
    const config = await Config.load(root)
    let relations = 0
    for (const loadable of config.commands) {
      const command = await loadable.load()
      const flags = {...command.baseFlags, ...command.flags, ...(command.enableJsonFlag ? {json: {}} : {})} as Record<
        string,
        {default?: unknown; dependsOn?: string[]; exclusive?: string[]; exactlyOne?: string[]; relationships?: Array<{flags: string[]}>; whyRelated?: object}
      >
      for (const [name, flag] of Object.entries(flags)) {
        const named = [...(flag.dependsOn ?? []), ...(flag.exclusive ?? []), ...(flag.exactlyOne ?? []), ...(flag.relationships ?? []).flatMap((r) => r.flags)]
        if (named.length === 0) continue
        relations++
        const where = `${loadable.id} --${name}`
        for (const other of named) expect(Object.keys(flags), `${where} names --${other}`).toContain(other)
        for (const kind of ['dependsOn', 'exclusive', 'exactlyOne'] as const)
          if (flag[kind]) expect(flag.whyRelated, `${where}: why ${kind}`).toHaveProperty(kind)
        if (flag.relationships) expect(flag.whyRelated, `${where}: why some`).toHaveProperty('some')
        // oclif takes a flag with a default as given: one that depends on another would always be
        // checked, and one depended on would never be missing.
        if (flag.dependsOn) {
          expect(flag.default, `${where} has a default`).toBeUndefined()
          for (const other of flag.dependsOn) expect(flags[other].default, `${where} depends on --${other}, which has a default`).toBeUndefined()
        }
      }
    }
    expect(relations).toBeGreaterThanOrEqual(40)
  })
})
