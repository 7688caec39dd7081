import {Flags} from '@oclif/core'

/** Flags of the commands that read or write state: where it is, and the AWS settings a team store needs. */
export const stateFlags = {
  'endpoint-url': Flags.string({description: 'Send AWS calls to this endpoint (also AWS_ENDPOINT_URL).', helpValue: 'URL'}),
  profile: Flags.string({description: 'AWS profile from the shared config files.', env: 'AWS_PROFILE'}),
  region: Flags.string({description: 'AWS region (also AWS_REGION).'}),
  state: Flags.string({description: 'Where state lives: a directory, or dynamodb://TABLE for a team (default $SLUICE_STATE or ./.sluice).', helpValue: 'DIR|dynamodb://TABLE'}),
}

export function awsFromFlags(flags: {region?: string; profile?: string; 'endpoint-url'?: string}) {
  return {region: flags.region, profile: flags.profile, endpoint: flags['endpoint-url']}
}
