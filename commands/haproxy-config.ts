import {SluiceCommand} from '../src/cli/base.js'
import {runbookArg} from '../src/cli/flags.js'
import {InputError} from '../src/errors.js'
import {haproxySnippets, snippetText, type HaproxySnippets} from '../src/wiring/haproxy-snippets.js'
import {loadRunbook} from '../src/loader/shipped.js'

export default class HaproxyConfig extends SluiceCommand {
  static override summary = 'Print the haproxy.cfg lines a runbook on HAProxy needs.'

  static override description = `Prints, from the runbook's targets.haproxy, what haproxy.cfg must hold for sluice to drive it over the Runtime API: the admin \`stats socket\` at the runbook's socket (in \`global\`); the restriction and ramp lines that read the runbook's restriction and ramp maps (in the frontend, before any other \`use_backend\`); in each backend what the runbook declares or its gates need (\`default-server slowstart\`, \`option abortonclose\`); and what each map file holds when HAProxy starts. The ramp lines split traffic between the two backends the runbook's ramps name; the map starts with all of it on the one not ramped first.

These are the lines \`sluice drill\` gives the HAProxy it starts. A runbook with no targets.haproxy is bad input (exit 2). With --json: the same pieces (global, frontend, backends, maps, ramp).`

  static override examples = [
    '<%= config.bin %> <%= command.id %> outlook-staged-return-haproxy',
    '<%= config.bin %> <%= command.id %> runbooks/my-runbook.yaml --json',
  ]

  static override args = {
    runbook: runbookArg,
  }

  async run(): Promise<HaproxySnippets & {runbook: string}> {
    const {args} = await this.parse(HaproxyConfig)
    const runbook = loadRunbook(args.runbook)
    const targets = runbook.targets
    if (!targets.haproxy)
      throw new InputError(
        `${runbook.file}: runbook ${runbook.name} has no targets.haproxy, so there is nothing for haproxy.cfg: haproxy-config prints the lines for a runbook that drives HAProxy (targets.haproxy with socket, backends, and restrictMap or rampMap)`,
      )
    const rampSets = runbook.steps.flatMap((s) => (s.action === 'ramp' ? [s.set] : []))
    const snippets = haproxySnippets({...targets, haproxy: targets.haproxy}, rampSets, runbook.file)
    if (!this.jsonEnabled()) for (const line of snippetText(snippets, runbook.name)) this.log(line)
    return {runbook: runbook.name, ...snippets}
  }
}
