import {Flags} from '@oclif/core'
import {iamPolicy, noPolicyNeeded, readOnlyPolicy} from '../src/live/iam-policy.js'
import {SluiceCommand} from '../src/cli/base.js'
import {runbookArg} from '../src/cli/flags.js'
import {loadRunbook} from '../src/loader/shipped.js'

export default class IamPolicy extends SluiceCommand {
  static override summary = 'Print the least-privilege IAM policy a runbook needs.'

  static override description = `Prints an IAM policy document (JSON) that allows exactly the calls the runbook's steps and gates make, on the runbook's own zone, record, target groups and listener where AWS allows resource-level permissions.

Not listed: sts:GetCallerIdentity, which a live run and \`plan --live\` call to name the AWS account in their confirmation and plan: AWS requires no permission for it.`

  static override examples = [
    '<%= config.bin %> <%= command.id %> runbooks/outlook-staged-return.yaml > sluice-policy.json',
    '<%= config.bin %> <%= command.id %> runbooks/outlook-staged-return.yaml --read-only > sluice-look-policy.json',
  ]

  static override flags = {
    'read-only': Flags.boolean({description: 'Only the reads: the policy `sluice plan --live` and `sluice status` need, which can change nothing.'}),
  }

  static override args = {
    runbook: runbookArg,
  }

  async run(): Promise<ReturnType<typeof iamPolicy>> {
    const {args, flags} = await this.parse(IamPolicy)
    const runbook = loadRunbook(args.runbook)
    const policy = flags['read-only'] ? readOnlyPolicy(runbook) : iamPolicy(runbook)
    const none = noPolicyNeeded(runbook, policy)
    if (!this.jsonEnabled()) this.log(none ?? JSON.stringify(policy, null, 2))
    return policy
  }
}
