import {Flags} from '@oclif/core'
import {SluiceCommand} from '../src/cli/base.js'
import {awsFlags, awsOptionsOf, stateFlags} from '../src/cli/flags.js'
import {openStateStore} from '../src/cli/state-store.js'

export default class Serve extends SluiceCommand {
  static override summary = 'A live page of the runs in the state store, for the incident bridge.'

  static override description = `Starts a web server over the state store every command uses (the same --state; dynamodb://TABLE shows a team's runs) and prints its address. One page, nothing fetched from elsewhere: every run (running, paused, held, dead, ended) with its operator, runbook, step and age; the freeze and who set it; every lock and lease with its holder and when it lapses; and one run live: its steps with the current one marked, every change as journalled, the weights over time, each gate's verdicts with value, bound, baseline and requests, and the controls sent to it, as charts and as tables. It updates within a second of each journal entry, and reconnects when the server or the run restarts.

Read-only by default. With --controls the page can pause, promote and abort (with or without a rollback), each asked to confirm on the page, behind the token printed at start (typed into the page, never in a URL), through the same path as \`sluice pause\`, journalled with the name the page gives. It listens on 127.0.0.1 unless --host says otherwise; any other address needs the token for every read too. With --json it prints one line, {url, controls, token}, and serves until interrupted.`

  static override examples = [
    '<%= config.bin %> <%= command.id %>',
    '<%= config.bin %> <%= command.id %> --controls --port 7100',
    '<%= config.bin %> <%= command.id %> --state dynamodb://sluice-state --host 0.0.0.0 --port 7100',
  ]

  static override flags = {
    ...stateFlags,
    ...awsFlags,
    host: Flags.string({description: 'The address to listen on (default 127.0.0.1; any other needs the token for every read).', default: '127.0.0.1'}),
    port: Flags.integer({description: 'The port to listen on (default 7100; 0 picks a free one).', default: 7100, min: 0, max: 65535}),
    controls: Flags.boolean({description: 'Let the page pause, promote and abort runs, with the token printed at start.', default: false}),
  }

  async run(): Promise<{url: string; controls: boolean; token: string}> {
    const {flags} = await this.parse(Serve)
    const store = await openStateStore(flags.state, awsOptionsOf(flags))
    const [{serve}, crypto, path, {packageRoot}] = await Promise.all([
      import('../src/serve/server.js'),
      import('node:crypto'),
      import('node:path'),
      import('../src/package-root.js'),
    ])
    const token = crypto.randomBytes(24).toString('base64url')
    const serving = await serve({store, host: flags.host, port: flags.port, controls: flags.controls, token, assets: path.join(packageRoot, 'assets', 'serve')})
    const loopback = ['127.0.0.1', '::1', 'localhost'].includes(flags.host)
    const started = {url: serving.url, controls: flags.controls, token}
    if (this.jsonEnabled()) process.stdout.write(`${JSON.stringify(started)}\n`)
    else {
      this.log(`sluice serve: ${serving.url} (${flags.controls ? 'with controls' : 'read-only'}; ${store.label})`)
      if (flags.controls || !loopback)
        this.log(
          `token: ${token} (type it into the page; ${flags.controls ? 'controls need it' : ''}${flags.controls && !loopback ? ', and ' : ''}${loopback ? '' : 'every read needs it off loopback'})`,
        )
      this.log('Ctrl-C stops it.')
    }
    await new Promise<void>((resolve) => {
      process.once('SIGINT', resolve)
      process.once('SIGTERM', resolve)
    })
    await serving.close()
    this.streamed = true
    return started
  }

  /** The address was the output, printed when the server started: nothing more at the end. */
  private streamed = false

  override logJson(json: unknown): void {
    if (!this.streamed) super.logJson(json)
  }
}
