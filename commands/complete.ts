import {Command} from '@oclif/core'

/**
 * What the shell completion scripts call for argument and flag values (src/cli/completion.ts has
 * the protocol). Hidden, and no sluice command: it parses no flags of its own (the words are the
 * shell's), prints nothing on stderr, and always exits 0.
 */
export default class Complete extends Command {
  static override hidden = true

  static override summary = 'Print completion candidates for the words after `sluice` (for the shell scripts `sluice autocomplete` installs).'

  static override strict = false

  static override examples = ['<%= config.bin %> <%= command.id %> -- watch ""', '<%= config.bin %> <%= command.id %> -- run outlook']

  async run(): Promise<void> {
    try {
      const words = this.argv[0] === '--' ? this.argv.slice(1) : this.argv
      // The words are the shell's, not this command's: parse none of them (oclif warns unless parse is called; it resets this.argv).
      await this.parse(Complete, [])
      const {complete} = await import('../src/cli/completion.js')
      const lines = await complete(words, (id) => this.config.findCommand(id))
      if (lines.length > 0) process.stdout.write(`${lines.join('\n')}\n`)
    } catch {
      // Nothing into the shell, whatever happened.
    }
  }

  // An error oclif itself raises (none is expected) completes nothing, with exit 0.
  protected override async catch(): Promise<void> {}
}
