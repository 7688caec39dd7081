import {Flags} from '@oclif/core'
import {SluiceCommand} from '../src/cli/base.js'
import {awsFlags, awsOptionsOf, decimal, prometheusFlags, prometheusOf, randomnessFlag, seconds} from '../src/cli/flags.js'
import {writeOutput} from '../src/cli/output-file.js'
import {related} from '../src/cli/flag-relations.js'
import {InputError} from '../src/errors.js'
import type {Assessment} from '../src/assess/assess.js'
import type {PoolNow} from '../src/ports/pool-readings.js'

// The pool is read live, named by a pair of flags (one pair of three), or described by two:
// declared on the flags, so oclif refuses half a pair, two pools or none, and help says so.
const alb = ['target-group', 'load-balancer']
const haproxyPool = ['haproxy', 'backend']
const prometheusPool = ['prometheus', 'mapping']
const livePools = [...alb, ...haproxyPool, ...prometheusPool]
const onePool = {
  flags: ['target-group', 'haproxy', 'prometheus', 'demand'],
  why: 'assess places one pool: one it reads live (an ALB target group, a HAProxy backend or Prometheus), or one described',
}
const oneLivePool = (flags: string[]) => ({flags, why: 'read one live pool: an ALB target group, a HAProxy backend or Prometheus, not both'})
const describedOrLive = {flags: livePools, why: 'describe a pool (--demand, --in-rotation) or read a live one, not both'}
const albPair = 'a live pool is named by both --target-group and --load-balancer'
const haproxyPair = 'a HAProxy pool is named by both --haproxy and --backend'
const describedPair = 'a described pool needs both --demand and --in-rotation'
const mapOnly = {flags: ['quick'], why: 'it saves the map, which --quick leaves out; drop one of them'}

export default class Assess extends SluiceCommand {
  static override summary = 'Say whether a live pool would come back on its own if the trigger were fixed now, and the smallest lever that gets it out.'

  static override description = `Reads the pool now (an ALB target group's targets and its last minutes of CloudWatch metrics, a HAProxy backend's servers and counters over a few seconds, or the queries a mapping file names in Prometheus over the last two minutes: demand, servers in rotation, errors), places it on the map of its calibrated scenario (\`sluice calibrate\` writes one) and says, in sentences to paste into the incident channel: unharmed, recovering (fixed now, it comes back on its own, in how long) or stuck; how far it is from the tipping point, in demand and in servers out; and, when stuck, the smallest lever that gets it out, each checked by simulation from now: shed a share of all traffic, or of a traffic type (whole types on an ALB), route to every server below a share healthy (an ALB's minimum healthy targets routing, Envoy's panic threshold), cap ejection (Envoy), a retry budget, slow start, servers added. Then the map, servers out × demand, with the pool on it.

It says demand against what the servers in rotation can serve. It changes nothing. Without a live pool, --demand and --in-rotation place a pool you describe. --quick skips the map. Its work is bounded (--budget): a pool too big to simulate server by server is asked of a scale model, and what does not fit the budget is left out and said. --watch re-assesses every interval until Ctrl-C (with --json, one assessment a line), and ends as the last assessment did. Exit 0 unharmed or recovering, 3 stuck.`

  static override examples = [
    '<%= config.bin %> <%= command.id %> --scenario mailbox.yaml --target-group arn:aws:elasticloadbalancing:eu-west-1:123:targetgroup/mailbox/abc --load-balancer app/outlook-edge/def',
    '<%= config.bin %> <%= command.id %> --scenario mailbox.yaml --prometheus http://prometheus:9090 --mapping mailbox-prometheus.yaml',
    '<%= config.bin %> <%= command.id %> --scenario outlook-2026 --demand 1500 --in-rotation 14 --quick',
  ]

  static override flags = {
    scenario: Flags.string({
      char: 's',
      description: "The pool's calibrated scenario: a file `sluice calibrate` wrote, or a built-in name.",
      helpValue: 'NAME|FILE',
      required: true,
    }),
    setup: Flags.string({description: "The scenario's setup the pool runs with (default: its first).", helpValue: 'NAME'}),
    'target-group': related(Flags.string({description: 'Read the pool now from this target group.', helpValue: 'ARN'}), {
      dependsOn: {flags: ['load-balancer'], why: albPair},
      exclusive: oneLivePool([...haproxyPool, ...prometheusPool]),
      exactlyOne: onePool,
    }),
    'load-balancer': related(Flags.string({description: "The load balancer's CloudWatch dimension, app/NAME/ID.", helpValue: 'app/NAME/ID'}), {
      dependsOn: {flags: ['target-group'], why: albPair},
      exclusive: oneLivePool([...haproxyPool, ...prometheusPool]),
    }),
    haproxy: related(Flags.string({description: "Read the pool now from this HAProxy's Runtime API (its stats socket, or HOST:PORT).", helpValue: 'SOCKET'}), {
      dependsOn: {flags: ['backend'], why: haproxyPair},
      exclusive: oneLivePool([...alb, ...prometheusPool]),
      exactlyOne: onePool,
    }),
    backend: related(Flags.string({description: 'The HAProxy backend that is the pool.', helpValue: 'NAME'}), {
      dependsOn: {flags: ['haproxy'], why: haproxyPair},
      exclusive: oneLivePool([...alb, ...prometheusPool]),
    }),
    budget: decimal({
      description:
        'Work the assessment may do, in servers × ticks simulated (default 3e8 with --quick, 2e9 with the map): what does not fit is left out and said; where the pool is must fit, or exit 1.',
      min: 1,
      helpValue: 'SERVER-TICKS',
    }),
    prometheus: related(prometheusFlags.prometheus, {exclusive: oneLivePool([...alb, ...haproxyPool]), exactlyOne: onePool}),
    mapping: related(prometheusFlags.mapping, {exclusive: oneLivePool([...alb, ...haproxyPool])}),
    demand: related(decimal({description: 'Without a live pool: the demand now, in requests a second.', min: 0, helpValue: 'RPS'}), {
      dependsOn: {flags: ['in-rotation'], why: describedPair},
      exclusive: describedOrLive,
      exactlyOne: onePool,
    }),
    'in-rotation': related(Flags.integer({description: 'Without a live pool: servers in rotation now.', min: 0}), {
      dependsOn: {flags: ['demand'], why: describedPair},
      exclusive: describedOrLive,
    }),
    servers: Flags.integer({description: "Without a live pool: servers in the pool (default: the scenario's).", min: 1}),
    errors: decimal({description: 'Without a live pool: the error rate now, in percent (default 0).', min: 0, max: 100, helpValue: 'PERCENT'}),
    broken: Flags.integer({description: 'How many servers the trigger broke, if you know (default: every server out of rotation now).', min: 0}),
    runbook: Flags.string({
      description:
        'Also rehearse this runbook (a shipped name or a file; a tuned one, say) from now as a lever: whether the pool is back when it has ended, and how soon. Repeatable.',
      helpValue: 'NAME|FILE',
      multiple: true,
    }),
    quick: Flags.boolean({description: 'No map: the verdict, the tipping points and the levers only (about a second).'}),
    randomness: randomnessFlag,
    seeds: Flags.integer({
      description:
        'Ask "fixed now, does it come back?" on this many seeds, and say on how many it tipped and when: tipped on every one is STUCK, on some AT RISK (exit 3 either way). Default: 10 where randomness is drawn, 1 where none.',
      min: 1,
      max: 50,
      helpValue: 'N',
    }),
    watch: related(seconds({description: 'Re-assess a live pool every this many seconds until Ctrl-C.', min: 5, max: 3600}), {
      some: {flags: ['target-group', 'haproxy', 'prometheus'], why: 'it re-assesses a live pool'},
    }),
    svg: related(Flags.string({description: 'Also save the map, with the pool and its way out drawn on it, as an SVG file.', helpValue: 'FILE'}), {
      exclusive: mapOnly,
    }),
    html: related(Flags.string({description: 'Also save the assessment as one page: the sentences, the levers and the map.', helpValue: 'FILE'}), {
      exclusive: mapOnly,
    }),
    workers: Flags.integer({description: 'Threads the map runs on (default: one with --quick, else the available cores).', min: 1, max: 64}),
    ...awsFlags,
  }

  async run(): Promise<Assessment> {
    const {flags} = await this.parse(Assess)
    // oclif has refused flags that name no pool, two, or half of one (the relations declared on them).
    const onAws = flags['target-group'] !== undefined
    const prometheus = prometheusOf(flags)
    const described = flags.demand !== undefined
    const live = !described

    const [{loadScenario, pickSetups, withRandomness}, {assess, familyOf}, {cellRunner, defaultWorkers}, {renderAssessment, assessSvg, assessHtml}] =
      await Promise.all([
        import('../src/sim/scenario/load-scenario.js'),
        import('../src/assess/assess.js'),
        import('../src/sweep/workers.js'),
        import('../src/report/assess.js'),
      ])
    const scenario = withRandomness(loadScenario(flags.scenario).scenario, flags.randomness)
    const setup = pickSetups(scenario, flags.setup ? [flags.setup] : 'all')[0]
    const poolServers = flags.servers ?? scenario.pools[0].servers ?? 0
    if (described && flags['in-rotation']! > poolServers)
      throw new InputError(`--in-rotation: expected at most the pool's ${poolServers} servers but received: ${flags['in-rotation']}`)
    const readings = live
      ? (await import('../src/wiring/readings.js')).poolReadings(
          prometheus
            ? {kind: 'prometheus', ...prometheus}
            : onAws
              ? {kind: 'alb', targetGroup: flags['target-group']!, loadBalancer: flags['load-balancer']!}
              : {kind: 'haproxy', socket: flags.haproxy!, backend: flags.backend!},
          awsOptionsOf(flags),
        )
      : null
    // A mapping says what fronts the pool; a scenario's checks are HAProxy's or not: the two must agree.
    if (prometheus && readings && (readings.readings.family === 'haproxy') !== Boolean(scenario.healthCheck.haproxy)) {
      readings.close()
      throw new InputError(
        `--mapping: ${prometheus.mapping} says family ${readings.readings.family}, and the scenario's healthCheck is ${scenario.healthCheck.haproxy ? '' : 'not '}kind: haproxy; calibrate the pool from this mapping, or name its scenario`,
      )
    }
    const family = familyOf(scenario, readings?.readings.family)
    const runbooks = flags.runbook
      ? await (async () => {
          const [{loadRunbook}, {rehearsedRunbooks}] = await Promise.all([import('../src/loader/shipped.js'), import('../src/wiring/runbook-levers.js')])
          return rehearsedRunbooks(flags.runbook!.map((ref) => ({ref, runbook: loadRunbook(ref)})))
        })()
      : undefined
    const source = readings ? readings.readings.source : `${scenario.pools[0].name} as described`
    const runner = cellRunner({scenario, setups: [setup], params: []}, flags.workers ?? (flags.quick ? 1 : defaultWorkers()))
    const stop = new AbortController()
    const onSignal = () => stop.abort()
    process.once('SIGINT', onSignal)
    try {
      for (;;) {
        const state: PoolNow = readings
          ? await readings.readings.now(stop.signal)
          : {at: Date.now() / 1000, servers: poolServers, healthy: flags['in-rotation']!, demand: flags.demand!, errorRate: (flags.errors ?? 0) / 100}
        if (flags.broken !== undefined && flags.broken > state.servers)
          throw new InputError(`--broken: expected at most the pool's ${state.servers} servers but received: ${flags.broken}`)
        const assessment = await assess(scenario, setup, state, {
          family,
          quick: flags.quick,
          runner,
          broken: flags.broken,
          runbooks,
          budget: flags.budget,
          source,
          seeds: flags.seeds,
        })
        if (flags.svg && assessment.map) writeOutput('--svg', flags.svg, assessSvg(assessment)!)
        else if (flags.svg) this.note(`--svg: ${flags.svg} not written: the map was left out to stay within the budget`)
        if (flags.html) writeOutput('--html', flags.html, assessHtml(assessment, source))
        if (flags.watch !== undefined)
          this.progress(`assessed at ${new Date().toISOString().slice(11, 19)}Z: ${assessment.region.toUpperCase()}; again in ${flags.watch} s (Ctrl-C ends)`)
        if (this.jsonEnabled() && flags.watch !== undefined) {
          process.stdout.write(`${JSON.stringify(assessment)}\n`)
          this.streamed = true
        } else if (!this.jsonEnabled())
          this.log(
            `${flags.watch === undefined ? '' : `${new Date().toISOString()}\n`}${renderAssessment(assessment, {color: this.color, width: this.width, source})}`,
          )
        // Ctrl-C ends --watch as the last assessment ended: 3 while stuck or at risk.
        if (assessment.region === 'stuck' || assessment.region === 'at-risk') this.endWith('gate-failed')
        else process.exitCode = 0
        if (flags.watch === undefined || stop.signal.aborted) return assessment
        await new Promise((resolve) => {
          const timer = setTimeout(resolve, flags.watch! * 1000)
          stop.signal.addEventListener('abort', () => (clearTimeout(timer), resolve(undefined)), {once: true})
        })
        if (stop.signal.aborted) return assessment
        this.log('')
      }
    } finally {
      process.off('SIGINT', onSignal)
      readings?.close()
      await runner.close()
    }
  }

  /** Under --watch --json the assessments were the output, one per line: no summary object after them (errors still print). */
  private streamed = false

  override logJson(json: unknown): void {
    if (!this.streamed) super.logJson(json)
  }
}
