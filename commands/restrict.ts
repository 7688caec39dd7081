import {Flags} from '@oclif/core'
import {SluiceCommand} from '../src/cli/base.js'
import {pair, seconds, targetFlags} from '../src/cli/flags.js'
import type {RunJson} from '../src/cli/run-runbook.js'
import {runSingleStep, trafficCommandFlags} from '../src/cli/step-command.js'

export default class Restrict extends SluiceCommand {
  static override summary = 'Turn a traffic type away at the load balancer with a fast 503.'

  static override description = `Adds a listener rule that answers a class of requests (by path or header) with 503 and Retry-After, to cut load and to find out whether one type of request is making things worse. \`sluice lift\` removes it.`

  static override examples = [
    '<%= config.bin %> <%= command.id %> --type background-sync --path "/sync/*" --retry-after 300 --scenario outlook-recovery --dry-run',
    '<%= config.bin %> <%= command.id %> --type background-sync --path /sync/ --share 70 --haproxy-socket /run/haproxy/admin.sock --restrict-map /etc/haproxy/sluice-restricted.map --backend web=be_web',
  ]

  static override flags = {
    ...trafficCommandFlags,
    ...targetFlags.listener,
    ...targetFlags.haproxy,
    header: pair({description: 'Match requests with this header value (repeatable).', helpValue: 'NAME=VALUE'})({multiple: true}),
    path: Flags.string({description: 'Match requests whose path matches this pattern (repeatable).', multiple: true}),
    'retry-after': seconds({description: 'How long the 503 tells clients to wait (default 120 s).'}),
    share: Flags.integer({
      description:
        "Turn away this percent of the type's requests, drawn at random (default 100). HAProxy only: an ALB listener rule turns away all it matches.",
      min: 1,
      max: 100,
    }),
    type: Flags.string({description: 'The traffic type: names the rule (and is the simulated traffic type).', required: true}),
  }

  async run(): Promise<RunJson> {
    const {flags} = await this.parse(Restrict)
    const headers: Record<string, string[]> = {}
    for (const {key, value} of flags.header ?? []) headers[key] = [...(headers[key] ?? []), value]
    const step = {
      action: 'restrict',
      type: flags.type,
      paths: flags.path ?? [],
      headers,
      ...(flags['retry-after'] === undefined ? {} : {retryAfter: flags['retry-after']}),
      ...(flags.share === undefined ? {} : {share: flags.share}),
    }
    return runSingleStep(
      step,
      flags,
      {
        'steps[0].type': '--type',
        'steps[0].paths': '--path',
        'steps[0].headers': '--header',
        'steps[0].retryAfter': '--retry-after',
        'steps[0].share': '--share',
      },
      this.jsonEnabled(),
      this.printer(),
    )
  }
}
