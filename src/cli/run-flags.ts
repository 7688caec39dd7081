import {Flags} from '@oclif/core'
import {numberFlag} from './flags.js'

/** The flags every command that runs steps shares: `run` and the single-action commands. */
export const runFlags = {
  'dry-run': Flags.boolean({description: 'Rehearse against the simulated fleet instead of changing anything.', default: false}),
  html: Flags.string({description: 'Save the rehearsal report as an HTML page.', helpValue: 'FILE'}),
  pace: numberFlag({description: 'Rehearse at this many simulated seconds per real second, to watch it unfold (default: as fast as possible).'}),
  scenario: Flags.string({char: 's', description: 'The scenario to rehearse against (default: the runbook\'s rehearsal.scenario).', helpValue: 'NAME|FILE'}),
  setup: Flags.string({description: 'The scenario setup to rehearse against (default: the runbook\'s, or the scenario\'s first).', helpValue: 'NAME'}),
  svg: Flags.string({description: 'Save the rehearsal chart as SVG.', helpValue: 'FILE'}),
  yes: Flags.boolean({char: 'y', description: 'Approve every approval step and confirmation without asking.', default: false}),
}
