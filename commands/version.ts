import {SluiceCommand} from '../src/cli/base.js'

export default class Version extends SluiceCommand {
  static override summary = 'Print the version of sluice, and the platform and Node.js it runs on (also: --version, -v).'

  static override examples = ['<%= config.bin %> <%= command.id %>', '<%= config.bin %> <%= command.id %> --json']

  async run(): Promise<{version: string; platform: string; arch: string; node: string}> {
    await this.parse(Version)
    const {version, platform, arch} = this.config
    this.log(this.config.userAgent)
    return {version, platform, arch, node: process.version}
  }
}
