import {join} from 'node:path'
import {existsSync} from 'node:fs'
import {createServer} from 'node:net'
import {InputError, InterruptedError} from '../errors.js'
import {runRunbook, type RunResult} from '../engine/engine.js'
import {WallClock} from '../local/wall-clock.js'
import {pollUntil} from '../ports/target-groups.js'
import {RuntimeApi} from '../haproxy/runtime.js'
import {findHaproxy, installHaproxy, startHaproxy, type RunningHaproxy} from '../haproxy/process.js'
import type {EngineIO, RecordedMutation} from '../ports/io.js'
import {rehearse, settleSeconds, tapChanges} from './rehearsal.js'
import {fleetConfig} from '../sim/scenario/load-scenario.js'
import {scenarioLimits, type Scenario} from '../sim/scenario/schema.js'
import {simulateSetups} from '../sim/simulate.js'
import {faultWindow} from '../sim/fault-window.js'
import type {SimulationRecord} from '../sim/record.js'
import {drillControlPlane} from './drill-control-plane.js'
import {faultSteps, playFaults} from '../drill/faults.js'
import {predictedFromModel} from '../drill/model.js'
import {CpuWaitWatch} from '../drill/cpu-wait.js'
import {spreadSeeds} from '../drill/verdict.js'
import {fleetLoopDelay, sendFleetCommand} from '../drill/fleet.js'
import {drillHaproxy, drillMaps} from '../drill/haproxy-config.js'
import {spawnFleet, spawnLoad, type FleetProcess, type LoadProcess} from '../drill/process.js'
import {drillWindowSeconds, reportCard, type ReportCard, type Timeline} from '../drill/report-card.js'
import {sampleRotation, serversUp} from '../drill/rotation.js'
import {between, cutAt, failuresOf, lastSecond, perSecond, realTimeline, simTimeline} from '../drill/timeline.js'
import {stepTimes, type DrillReport, type DrillTarget, type StepTimes} from '../drill/report.js'
import {drillRestrictions, onDrillHaproxy} from '../drill/runbook-times.js'
import {scaleGateCounts, scaleRunbookRates, scaleRunbookTimes} from '../loader/scale-times.js'
import type {Runbook} from '../loader/runbook.js'
import {rollBackAfterRun, type RollbackAfterRun} from '../way-back/undo-run.js'
import {rollbackFigures} from '../drill/rollback-figures.js'
import {mostOutAtOnce} from '../actions/cycle/cycle.js'
import {
  chooseScales,
  drillBudget,
  drillFleetConfig,
  timeoutOverService,
  timeScaleFloor,
  drillLoadConfig,
  drillQueueSeconds,
  drawnAsDrilled,
  readingSeconds,
  servedAsDrilled,
  queuedAsDrilled,
  toScenarioTime,
  type DrillScales,
} from '../drill/scale.js'

/**
 * The HAProxy a drill starts: the one on the PATH only, the HAProxy this shell would start;
 * without one, bad input saying where one is (Debian's is in /usr/sbin, off many users' PATH).
 */
export function drillHaproxyBinary(): string {
  const haproxy = findHaproxy(process.env.PATH ?? '', {onPathOnly: true})
  if (haproxy) return haproxy
  const sbin = ['/usr/sbin/haproxy', '/usr/local/sbin/haproxy'].find((p) => existsSync(p))
  throw new InputError(`haproxy is not on the PATH${sbin ? ` (there is one at ${sbin}: add its directory to PATH)` : `: ${installHaproxy}`}`)
}

export interface DrillOptions {
  haproxy: string
  /** Either scale left out is chosen to fit the machine (chooseScales). */
  scales: Partial<DrillScales>
  /** Scenario seconds of work a server queues before it stops reading requests (default: the pool's queueSeconds, else unboundedQueueSeconds). */
  queueSeconds?: number
  signal: AbortSignal
  /** What the drill is doing now, for a progress line: a phase, or the wall seconds of the run. */
  progress: (message: string) => void
  /** A line to keep: the scales once chosen. */
  say: (line: string) => void
  /** The real run's engine events (a runbook drill), for the terminal to show. */
  io: EngineIO
  /** Where the fleet and load programs are, when not beside this module (tests run from source). */
  programs?: {fleet?: string; load?: string}
  /** Which repeat this is, from 0: each draws its own arrivals (drillLoadConfig). */
  run?: number
  /** Predictions over this many seeds beside the scenario's own (spreadSeeds); 0 for none. */
  seeds?: number
  /** Predict from this scenario's pool, checks and clients instead of the drilled one's (predictedFromModel). */
  model?: {scenario: Scenario; name: string}
  /** Also open HAProxy's admin socket here, for calibrate or an operator to read while the drill runs. */
  socket?: string
}

/** Seconds (scenario) the pool keeps running after a runbook ends in the real run, as a rehearsal settles. */
const settleAfterRunbook = 60

/**
 * Runs a drill: the simulator's prediction first (it also says how long the drill runs), then the
 * real thing on loopback: the fleet, HAProxy in front of it configured from the scenario's setup,
 * the load at the scenario's demand, the faults at their times, and the runbook (if any) from its
 * rehearsal start, on HAProxy's Runtime API. Every process it started is stopped before it
 * returns or throws, an interrupt included; an interrupt ends the run early and reports what ran.
 */
export async function runDrill(given: DrillTarget, options: DrillOptions): Promise<DrillReport> {
  // The prediction and the real fleet queue alike.
  const target = queuedAsDrilled(given, options.queueSeconds)
  const {scenario, setup} = target
  // What the prediction is of: the drilled scenario itself, or another's model of its pool, whose
  // queue is its own (the drill's --queue-seconds is the real fleet's).
  const forecast = options.model ? queuedAsDrilled(predictedFromModel(given, options.model.scenario, options.model.name)) : target
  const {signal, progress} = options
  const sim = fleetConfig(scenario, setup.policy)
  if (!sim.healthCheck.haproxy)
    throw new InputError(
      `${scenario.name} checks its servers as Envoy does; a drill runs HAProxy, so its scenario needs healthCheck kind haproxy (see scenarios/outlook-2026-haproxy.yaml)`,
    )
  for (const problem of notEnacted(scenario)) throw new InputError(problem)
  const {unsupported} = faultSteps(scenario, {rateScale: 1, timeScale: 1})
  if (unsupported.length > 0)
    throw new InputError(
      `${scenario.name}: faults[${unsupported[0]}] is a ${scenario.faults[unsupported[0]].kind}, which the drill's fleet cannot play; drills play broken, thread-hold and errors faults`,
    )

  progress('predicting with the simulator')
  // A first prediction says how long the drill runs, which sets its time scale; the one it is
  // judged by is of the fleet at that scale.
  const sizing = await predict(forecast)
  const peak = Math.max(...(scenario.demand.curve ?? [[0, scenario.demand.rps ?? 0]]).map(([, rps]) => rps))
  const {floor, timeout, serviceTime} = timeScaleFloor({...scenario, clients: {...scenario.clients, ...sim.clients}}, sim.healthCheck.interval)
  const asked = options.scales?.timeScale
  if (asked !== undefined && asked < floor - 1e-9)
    throw new InputError(
      `--time-scale ${asked}: ${timeout.what} would time out after ${Math.round(timeout.seconds * asked * 1000)} ms while a request takes ${Math.round(serviceTime * 1000)} ms to serve (service time is real, timeouts shrink with the time scale); a drill needs every timeout at least ${timeoutOverService} times the service time: a time scale of at least ${Math.round(floor * 1000) / 1000}`,
    )
  const scales = {...chooseScales(sizing.seconds, peak, drillBudget, floor), ...options.scales}
  const drilled = servedAsDrilled(forecast, scales.timeScale)
  // The gates on the real side count the requests the scaled fleet serves; so do the prediction's.
  const counted = scales.rateScale * scales.timeScale
  const predicted = await predict(drilled, counted)
  const seconds = predicted.seconds
  const finerTick = finerTickOf(scenario.tick)
  const finer = finerTick === null ? null : await predict({...drilled, scenario: {...drilled.scenario, tick: finerTick}}, counted)
  const seeds = options.seeds ?? spreadSeeds
  if (seeds > 0) progress(`predicting over ${seeds} seeds, arrivals drawn as the drill draws them`)
  const spread: Prediction[] = []
  for (const drawn of drawnAsDrilled(drilled, scales, seeds)) {
    if (signal.aborted) break
    spread.push(await predict(drawn, counted))
  }
  const queueSeconds = drillQueueSeconds(scenario)
  options.say(
    `${scenario.name} (${setup.name}) scaled to fit: rate scale ${scales.rateScale} (${Math.round(peak)} rps → ${Math.round(peak * scales.rateScale * 10) / 10} rps), time scale ${scales.timeScale} (${Math.round(seconds)} s → ${Math.round(seconds * scales.timeScale)} s); a request's ${Math.round(serviceTime * 1000)} ms of service is real, ${formatScenarioSeconds(serviceTime / scales.timeScale)} of the scenario's at this scale, as predicted`,
  )
  const window = faultWindow(scenario.faults)
  const broken = scenario.faults.find((f) => f.kind === 'broken')
  const fault = window ? {...window, servers: broken?.kind === 'broken' ? broken.servers : 0} : null
  const servers = scenario.pools.reduce((n, p) => n + (p.servers ?? 0), 0)
  const clients = {...scenario.clients, ...sim.clients}
  const scaled: Scenario = {...scenario, clients}

  const started = performance.now()
  let fleet: FleetProcess | null = null
  let haproxy: RunningHaproxy | null = null
  let load: LoadProcess | null = null
  const stops: Array<() => Promise<unknown>> = []
  // Ctrl-C before the load has started leaves nothing to report: stop what started, and say so.
  // `starting` is what the drill is doing until the load runs; null from then on.
  let starting: string | null = 'predicting'
  const nowStarting = (what: string) => {
    if (signal.aborted) throw interruptedWhileStarting(starting!)
    starting = what
    progress(what)
  }
  try {
    nowStarting('starting the fleet')
    fleet = await spawnFleet(drillFleetConfig(scenario, scales), options.programs?.fleet)
    const port = await freePort()
    const config = drillHaproxy(scenario, sim.healthCheck, sim.policy.slowStart, fleet, port, scales, options.socket)
    nowStarting('starting HAProxy')
    haproxy = await startHaproxy(options.haproxy, config.config, config.files, {signal})
    const api = new RuntimeApi(haproxy.socket)
    const serverPools = scenario.pools.filter((p) => p.kind === 'servers').map((p) => p.name)
    nowStarting('waiting for every server to pass its checks')
    await untilAllUp(api, serverPools, servers, signal)

    const bucket = readingSeconds(scenario) * scales.timeScale
    // A runbook's real run may take longer than predicted: the load runs on until it is stopped.
    const loadSeconds = seconds * scales.timeScale * (target.kind === 'runbook' ? 3 : 1)
    nowStarting('starting the load')
    load = await spawnLoad({...drillLoadConfig(scaled, scales, {host: '127.0.0.1', port}, options.run ?? 0), duration: loadSeconds}, options.programs?.load)
    starting = null
    const loadStarted = performance.now()
    // Every process of the run, this one included (it runs the runbook and reads HAProxy).
    const cpuWait = new CpuWaitWatch([process.pid, fleet.pid, load.pid, ...(haproxy.child.pid ? [haproxy.child.pid] : [])])
    stops.push(async () => cpuWait.stop())
    // The engine's clock is the epoch (WallClock): its step times, from here on, in scenario seconds.
    const loadStartedEpoch = Date.now() / 1000
    const rotation = sampleRotation(api, serverPools, bucket)
    stops.push(() => rotation.stop())
    const faults = playFaults(faultSteps(scenario, scales).steps, (command) => sendFleetCommand(fleet!.admin, command))
    stops.push(async () => faults.cancel())
    const ticker = setInterval(
      () => progress(`t = ${Math.round((performance.now() - loadStarted) / 1000 / scales.timeScale)} s of ${Math.round(seconds)} s (scenario)`),
      1000,
    )
    stops.push(async () => clearInterval(ticker))

    let real: RunResult | undefined
    let realRollback: RollbackAfterRun | undefined
    const wallNow = () => (performance.now() - loadStarted) / 1000
    const clock = new WallClock()
    const sleep = (seconds: number) => clock.sleep(seconds, signal)
    let endAt = seconds * scales.timeScale
    if (target.kind === 'runbook') {
      const startAt = predicted.startAt ?? 0
      await sleep(startAt * scales.timeScale - wallNow())
      if (!signal.aborted) {
        const runbook = onDrillHaproxy(drillRestrictions(scaleRunbookRates(scaleRunbookTimes(target.runbook, scales.timeScale), scales)), {
          socket: haproxy.socket,
          restrictMap: join(haproxy.dir, drillMaps.restrict),
          ...(config.ramp ? {rampMap: join(haproxy.dir, drillMaps.ramp)} : {}),
        })
        const control = drillControlPlane(
          config,
          haproxy.dir,
          haproxy.socket,
          fleet,
          Object.fromEntries(scenario.pools.map((p) => [p.name, p.restartSeconds * scales.timeScale])),
        )
        const approved = runbook.steps.filter((s) => s.action === 'approve').map((s) => s.index)
        const recorded: RecordedMutation[] = []
        real = await runRunbook(runbook, {control, io: tapChanges(options.io, recorded), signal, approved})
        if (target.rollback && real.outcome !== 'interrupted' && !signal.aborted)
          realRollback = await rollBackAfterRun(runbook, control, recorded, options.io, signal, {now: target.rollback === 'now'})
        endAt = Math.max(endAt, wallNow() + (target.settle ?? settleAfterRunbook) * scales.timeScale)
      }
    }
    await sleep(endAt - wallNow())
    // An interrupted drill sends no more faults; the ones still to come would only hold it open.
    if (signal.aborted) faults.cancel()
    await faults.done.catch((error: Error) => {
      throw new Error(`the drill could not play its faults: ${error.message}`)
    })
    clearInterval(ticker)
    progress('collecting the record')
    // Read before anything stops: the fleet's loop over the whole run.
    const fleetLoop = await fleetLoopDelay(fleet.admin).catch(() => null)
    const waited = cpuWait.stop()
    const record = await load.stop()
    const samples = await rotation.stop()
    const whole = realTimeline(record, samples, scales)
    const window = drillWindowSeconds(scales.timeScale)
    // Both sides over the same seconds: an interrupted drill, or a real run that ended before the
    // prediction, is read no further than it ran; a prediction that ended first, no further than it.
    const compared = {to: Math.min(lastSecond(whole), lastSecond(predicted.timeline)), realTo: lastSecond(whole), predictedTo: lastSecond(predicted.timeline)}
    const timeline = cutAt(whole, compared.to)
    const prediction = cutAt(predicted.timeline, compared.to)
    const spreadLines = spread.map((p) => cutAt(p.timeline, compared.to))
    const heldOut = target.kind === 'runbook' ? heldOutByRunbook(target.runbook, scenario) : 0
    const cardOf = (line: Timeline) => reportCard(line, fault, servers, window, heldOut)
    const span = target.kind === 'runbook' && predicted.startAt !== undefined ? {from: predicted.startAt, to: Math.min(compared.to, seconds)} : null
    const inSpan = (line: Timeline) => cardOf(between(line, span!.from, span!.to))
    const report: DrillReport = {
      target: {kind: target.kind, name: target.kind === 'runbook' ? target.runbook.name : scenario.name},
      scenario,
      ...(options.model ? {model: options.model.name} : {}),
      setup: setup.name,
      scales,
      queueSeconds,
      fault,
      servers,
      seconds,
      compared,
      runbookSpan: span && {...span, real: inSpan(timeline), predicted: inSpan(prediction), spread: spreadLines.map(inSpan)},
      wallSeconds: (performance.now() - started) / 1000,
      fullServiceWindow: window,
      real: {
        timeline,
        card: cardOf(timeline),
        failures: {run: failuresOf(record, scales, 0), afterFix: fault ? failuresOf(record, scales, fault.to) : null},
        ...(real
          ? {runbook: {outcome: real.outcome, message: real.message, steps: stepTimes(real, (at) => toScenarioTime(at - loadStartedEpoch, scales))}}
          : {}),
        ...(realRollback && target.kind === 'runbook' && target.rollback
          ? {rollback: figuresOf(realRollback, target.rollback, timeline, window, (at) => toScenarioTime(at - loadStartedEpoch, scales))}
          : {}),
      },
      predicted: {
        timeline: prediction,
        card: cardOf(prediction),
        ...(predicted.runbook ? {runbook: predicted.runbook} : {}),
        ...(predicted.rollback && target.kind === 'runbook' && target.rollback
          ? {rollback: figuresOf(predicted.rollback, target.rollback, prediction, window, (at) => at)}
          : {}),
      },
      finerTick: finer && finerTick !== null ? finerCard(finer, finerTick, compared.to, cardOf) : null,
      spread:
        spread.length > 0
          ? {
              seeds: spread.length,
              sampleScale: scales.rateScale * scales.timeScale,
              cards: spreadLines.map(cardOf),
            }
          : null,
      load: {
        eventLoopDelayP99Ms: record.loopDelay.p99,
        fleetLoopDelayP99Ms: fleetLoop?.p99 ?? null,
        cpuWait: waited,
        local: record.series.local.reduce((a, b) => a + b, 0) * record.bucketSeconds,
        offered: record.series.offered.reduce((a, b) => a + b, 0) * record.bucketSeconds,
        cpuSeconds: record.cpuSeconds,
        clientTimeoutWallMs: sim.clients.timeout * scales.timeScale * 1000,
        serviceTimeMs: Math.min(...scenario.pools.filter((p) => p.kind === 'servers').map((p) => p.serviceTime)) * 1000,
      },
      interrupted: signal.aborted,
    }
    return report
  } catch (error) {
    // Interrupted while starting, whatever the interrupt made fail: a child the terminal's Ctrl-C
    // reached too (it goes to the whole process group) exits before it answers, HAProxy stops, and
    // a Runtime API call the signal cut short is not sent. Each is the interrupt (130), not a failure.
    if (starting !== null && signal.aborted) throw error instanceof InterruptedError ? error : interruptedWhileStarting(starting)
    throw error
  } finally {
    progress('stopping every process the drill started')
    for (const stop of stops) await stop().catch(() => undefined)
    await Promise.allSettled([load?.stop(), haproxy?.stop(), fleet?.stop()])
  }
}

/**
 * Pool settings the prediction models and the loopback fleet does not enact, named so a drill is
 * refused rather than compared with a model it does not run: a churn of client connections (the
 * servers see HAProxy's connections, which it keeps open), and a collapse other than 1 (the real
 * servers waste what they really waste, answering requests whose clients have gone).
 */
export function notEnacted(scenario: Scenario): string[] {
  const problems: string[] = []
  scenario.pools.forEach((p, i) => {
    if (p.kind !== 'servers') return
    if (p.connectionChurn !== 0)
      problems.push(
        `${scenario.name}: pools[${i}].connectionChurn is ${p.connectionChurn}, which the drill's fleet does not enact: its servers see HAProxy's connections, which HAProxy keeps open; drill it with connectionChurn 0`,
      )
    if (p.collapse !== 1)
      problems.push(
        `${scenario.name}: pools[${i}].collapse is ${p.collapse}, which the drill's fleet does not enact: its servers waste what they really waste, answering queued requests whose clients have gone; drill it with the default collapse 1`,
      )
  })
  if (scenario.restrictions.length > 0)
    problems.push(
      `${scenario.name}: restrictions[0] turns ${scenario.restrictions[0].type} away from the scenario's own clock, which the drill does not enact; restrict it with a runbook's restrict step, which the drill runs on its HAProxy`,
    )
  return problems
}

/** The most servers a runbook's cycles take out of rotation at once: each cycle's budget (or batch) of its pool. */
function heldOutByRunbook(runbook: Runbook, scenario: Scenario): number {
  let most = 0
  for (const step of runbook.steps) {
    if (step.action !== 'cycle') continue
    const pool = scenario.pools.find((p) => p.name === step.pool)
    most = Math.max(most, mostOutAtOnce(step, pool?.servers ?? 0))
  }
  return most
}

export interface Prediction {
  record: SimulationRecord
  /** How long the drill runs: the simulation, or the rehearsal until its runbook ended and the fleet settled. */
  seconds: number
  timeline: Timeline
  startAt?: number
  runbook?: {outcome: RunResult['outcome']; message: string; steps: StepTimes[]}
  /** The rollback after the runbook (target.rollback), in the scenario's seconds. */
  rollback?: RollbackAfterRun
}

/**
 * The simulator's run of the same scenario and setup: a simulation, or the runbook's rehearsal
 * from the runbook's own start (rehearsal.startAt), which the real run then starts at too.
 */
export async function predict(target: DrillTarget, countScale = 1): Promise<Prediction> {
  if (target.kind === 'scenario') {
    const {record} = simulateSetups(target.scenario, [target.setup]).setups[0]
    return {record, seconds: endOf(record.t[record.ticks - 1], target.scenario.tick), timeline: perSecond(simTimeline(record))}
  }
  const quiet: EngineIO = {notify: () => undefined, confirm: async () => true}
  const signal = new AbortController().signal
  const report = await rehearse(
    scaleGateCounts(target.runbook, countScale),
    {io: quiet, signal, operator: 'drill', approved: target.runbook.steps.map((s) => s.index)},
    {
      scenario: target.scenario,
      setup: target.setup.name,
      // Handing the scenario over would otherwise start the runbook at the least history a rehearsal gives.
      ...(target.runbook.rehearsal ? {startAt: target.runbook.rehearsal.startAt} : {}),
      pace: null,
      // The drill's own --seeds draws the others.
      seeds: 1,
      countScale,
      ...(target.rollback ? {rollback: target.rollback} : {}),
    },
  )
  const {rehearsal, run} = report
  // The simulated clock may have run past the end (a wait beyond the scenario extends it); the
  // drill runs what the rehearsal settles in, as `run --dry-run` reports it.
  const ticks = Math.min(rehearsal.record.ticks, Math.ceil((rehearsal.endAt + (target.settle ?? settleSeconds)) / target.scenario.tick))
  const seconds = endOf(rehearsal.record.t[ticks - 1], target.scenario.tick)
  return {
    record: rehearsal.record,
    seconds,
    // The whole simulated run, past the settle: a real run that takes longer is compared over as much of it as both have.
    timeline: perSecond(simTimeline(rehearsal.record)),
    startAt: rehearsal.startAt,
    // The rehearsal's clock is the scenario's.
    runbook: {outcome: run.outcome, message: run.message, steps: stepTimes(run, (at) => at)},
    ...(rehearsal.rollback ? {rollback: rehearsal.rollback} : {}),
  }
}

/** A side's rollback as the report reads it, its clock's seconds turned into the scenario's. */
function figuresOf(r: RollbackAfterRun, how: 'ramped' | 'now', timeline: Timeline, window: number, scenarioTime: (at: number) => number) {
  return rollbackFigures(
    timeline,
    {
      how,
      startedAt: scenarioTime(r.startedAt),
      endedAt: scenarioTime(r.endedAt),
      outcome: r.outcome,
      message: r.message,
      plan: r.plan,
      verdicts: r.verdicts.map((v) => ({...v, at: scenarioTime(v.at)})),
    },
    window,
  )
}

/**
 * The end of a record whose last tick starts at `last`: to the microsecond, since ticks of a
 * fraction of a second add up with float noise, and 300.00000000000006 s would not fit a drill's
 * budget of 300 s at a time scale of a half.
 */
function endOf(last: number, tick: number): number {
  return Math.round((last + tick) * 1e6) / 1e6
}

/** A scenario's seconds as a drill's line says them: whole seconds, or to a hundredth below ten. */
function formatScenarioSeconds(s: number): string {
  return `${s >= 10 ? Math.round(s) : Math.round(s * 100) / 100} s`
}

/** A tenth of the tick, if a scenario may take it (scenarioLimits.minTick); null when it is already the finest. */
function finerTickOf(tick: number): number | null {
  const finer = tick / 10
  return finer >= scenarioLimits.minTick - 1e-12 ? finer : tick > scenarioLimits.minTick + 1e-12 ? scenarioLimits.minTick : null
}

/** The finer prediction's card, cut where an interrupted run stopped. */
function finerCard(finer: Prediction, tick: number, to: number, card: (line: Timeline) => ReportCard): {tick: number; card: ReportCard; timeline: Timeline} {
  const line = cutAt(finer.timeline, to)
  return {tick, card: card(line), timeline: line}
}

/** An interrupt before the load ran: said once every process the drill started is stopped (the error is thrown after runDrill's finally). */
function interruptedWhileStarting(what: string): InterruptedError {
  return new InterruptedError(`interrupted while the drill was starting (${what}); every process it started is stopped`)
}

/** Waits until HAProxy shows every server UP (its checks passed), for at most 30 s. */
async function untilAllUp(api: RuntimeApi, backends: string[], servers: number, signal: AbortSignal): Promise<void> {
  let up = 0
  const allUp = async () => (up = await serversUp(api, backends, signal)) === servers
  if (!(await pollUntil(allUp, 30, new WallClock(), 0.1, signal)) && !signal.aborted)
    throw new Error(`only ${up} of ${servers} servers passed HAProxy's checks within 30 s of starting`)
}

async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const {port} = server.address() as {port: number}
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}
