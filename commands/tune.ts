import {Flags} from '@oclif/core'
import {SluiceCommand} from '../src/cli/base.js'
import {decimal, rehearsalFlags, runbookArg} from '../src/cli/flags.js'
import {chooseMode} from '../src/cli/terminal/mode.js'
import {loadRunbook} from '../src/loader/shipped.js'
import {tuneProgress} from '../src/cli/tune-progress.js'
import {checkOutputName, startsWithBom, writeOutput} from '../src/cli/output-file.js'
import {inTheOriginalsForm} from '../src/tune/yaml.js'
import {renderTune} from '../src/tune/render.js'
import {fullTrafficDefinition, tuneRunbook, type TuneResult} from '../src/tune/tune.js'

export default class Tune extends SluiceCommand {
  static override summary = 'Find the ramp schedules and bakes that reach full traffic soonest in rehearsal with every gate passing.'

  static override description = `Searches the runbook's ramp steps (how many steps, which percentages, the bake) in rehearsal against its own scenario and setup (or --scenario and --setup, as \`run --dry-run\` takes them), for the ramps that reach full traffic soonest while the whole rehearsal completes and every gate verdict passes, on every seed of --seeds, with demand --demand-margin percent below and above the scenario's, and with a slow tenth of the servers (--slow-minority). A bake is never under the record's TTL (targets.dns.ttl, or the scenario's): a weight change reaches every client only after one TTL. A lift written with a schedule (a restriction lifted by degrees, HAProxy only) is tuned the same way: how many steps of its type let back, which percentages, the bake (whole gate intervals; not held to the TTL); a lift at once stays at once. Everything but the ramps' and lifts' schedule and bake stays as written; a ramp that a later ramp on the same set continues (the climb stops for a lift, say) may end at another weight, and the last ramp still ends where it did.

Time to full traffic: ${fullTrafficDefinition}.

Prints the time to full traffic before → after, each gate's worst value and margin across every rehearsal of the tuned runbook, and the ramp steps as YAML to paste. --write FILE saves the whole runbook tuned, comments and all. Exits 3 when no schedule it tries passes everywhere.`

  static override examples = [
    '<%= config.bin %> <%= command.id %> runbooks/outlook-staged-return.yaml',
    '<%= config.bin %> <%= command.id %> outlook-staged-return --seeds 10 --demand-margin 20 --write tuned.yaml',
    '<%= config.bin %> <%= command.id %> runbooks/outlook-staged-return.yaml --setup cap-shed-slow-start --json',
  ]

  static override args = {
    runbook: runbookArg,
  }

  static override flags = {
    seeds: Flags.integer({
      description:
        "How many seeds every candidate must pass: the scenario's own as written, and the ones after it, each drawing the servers' capacities from ±10% where a pool declares no spread of its own, and its requests as a Poisson process where the scenario sends them at the mean.",
      default: 5,
      min: 1,
      max: 100,
    }),
    'demand-margin': decimal({
      description: 'Demand off by this many percent each way, which every candidate must also pass (default 10; 0: demand as given only).',
      min: 0,
      max: 90,
      helpValue: 'PERCENT',
    }),
    'slow-minority': Flags.boolean({
      description:
        "Rehearse every candidate once more, on the scenario's own seed and demand, with one server in ten at 80% of its capacity in every pool of ten servers or more that declares no slow minority of its own (--no-slow-minority: not).",
      default: true,
      allowNo: true,
    }),
    scenario: rehearsalFlags.scenario,
    setup: rehearsalFlags.setup,
    write: Flags.string({description: 'Save the whole tuned runbook to this file (the rest of it as written, comments included).', helpValue: 'FILE'}),
  }

  async run(): Promise<Omit<TuneResult, 'text'> & {written: string | null}> {
    const {args, flags} = await this.parse(Tune)
    checkOutputName('--write', flags.write)
    const runbook = loadRunbook(args.runbook)
    const progress = tuneProgress(chooseMode({json: this.jsonEnabled()}), (text) => process.stderr.write(text))
    let result: TuneResult
    try {
      result = await tuneRunbook(
        runbook,
        {
          seeds: flags.seeds,
          demandMarginPercent: flags['demand-margin'] ?? 10,
          slowMinority: flags['slow-minority'],
          scenario: flags.scenario,
          setup: flags.setup,
        },
        progress.onEvent,
      )
    } finally {
      progress.done()
    }
    const {text, ...shown} = result
    if (flags.write && text !== null) {
      writeOutput(
        '--write',
        flags.write,
        inTheOriginalsForm(text, {text: runbook.source.kind === 'file' ? runbook.source.text : '', bom: startsWithBom(runbook.file)}),
      )
      this.note(`tuned runbook saved to ${flags.write}`)
    } else if (flags.write) this.note(`nothing saved to ${flags.write}: no tuned runbook`)
    if (!this.jsonEnabled()) this.log(renderTune(result, this.width))
    if (result.text === null) this.endWith('gate-failed')
    return {...shown, written: flags.write && text !== null ? flags.write : null}
  }
}
