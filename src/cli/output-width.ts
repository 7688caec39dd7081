/**
 * How wide a table on stdout may be: the terminal's own width, or $COLUMNS off a terminal (a
 * pipe, a pager, a test asking for a width), or 80. A pty without a size reports 0 columns
 * (src/cli/terminal/terminal-io.ts), which counts as none.
 */
export function outputWidth(stdout: {isTTY?: boolean; columns?: number} = process.stdout, env: NodeJS.ProcessEnv = process.env): number {
  if (stdout.isTTY && stdout.columns) return stdout.columns
  const columns = Number(env.COLUMNS)
  return Number.isInteger(columns) && columns > 0 ? columns : 80
}
