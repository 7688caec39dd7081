import {Flags} from '@oclif/core'
import {numberFlag} from './flags.js'

/** The flags every command that runs steps shares: `run` and the single-action commands. */
export const runFlags = {
  'break-lock': Flags.string({description: 'Break the locks a dead run holds before taking them (its run id, as the lock error names it).', helpValue: 'RUN_ID'}),
  'dry-run': Flags.boolean({description: 'Rehearse against the simulated fleet instead of changing anything.', default: false}),
  'endpoint-url': Flags.string({description: 'Send AWS calls to this endpoint (also AWS_ENDPOINT_URL), e.g. a local emulator.', helpValue: 'URL'}),
  html: Flags.string({description: 'Save the rehearsal report as an HTML page.', helpValue: 'FILE'}),
  pace: numberFlag({description: 'Rehearse at this many simulated seconds per real second, to watch it unfold (default: as fast as possible).'}),
  profile: Flags.string({description: 'AWS profile from the shared config files.', env: 'AWS_PROFILE'}),
  region: Flags.string({description: 'AWS region (also AWS_REGION).'}),
  scenario: Flags.string({char: 's', description: 'The scenario to rehearse against (default: the runbook\'s rehearsal.scenario).', helpValue: 'NAME|FILE'}),
  setup: Flags.string({description: 'The scenario setup to rehearse against (default: the runbook\'s, or the scenario\'s first).', helpValue: 'NAME'}),
  state: Flags.string({description: 'Where journals, locks and the freeze live: a directory, or dynamodb://TABLE for a team (default $SLUICE_STATE or ./.sluice).', helpValue: 'DIR|dynamodb://TABLE'}),
  svg: Flags.string({description: 'Save the rehearsal chart as SVG.', helpValue: 'FILE'}),
  yes: Flags.boolean({char: 'y', description: 'Approve every approval step and confirmation without asking.', default: false}),
}
