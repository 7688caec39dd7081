import {expect} from 'vitest'
import type {CliResult} from './cli.js'

// What the single-action commands' and simulate's tests expect of a run, in process and spawned alike.

/** Bad input: exit 2, nothing on stdout, one `Error: ` line on stderr, no stack trace; a string message is that whole line after `Error: `. */
export function expectBadInput(result: CliResult, message: string | RegExp): void {
  expect(result.code, result.stderr).toBe(2)
  expect(result.stdout).toBe('')
  const lines = result.stderr.trimEnd().split('\n')
  expect(lines, result.stderr).toHaveLength(1)
  expect(lines[0]).toMatch(/^Error: /)
  expect(lines[0]).toMatch(typeof message === 'string' ? new RegExp(`^Error: ${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) : message)
  expect(result.stderr).not.toMatch(/\bat .*\.js:\d+/)
}

/**
 * A completed one-step rehearsal: exit 0, what the action did on stdout (issue 48: the action's
 * outcome, not the scenario's report and chart; the chart is the --svg's, test/commands/outcome-first-and-last.test.ts),
 * the step's progress on stderr.
 */
export function expectCompleted(result: CliResult, doneLine: RegExp): void {
  expect(result.code, result.stderr).toBe(0)
  expect(result.stdout).toMatch(/^sluice [a-z]+ \(rehearsed; nothing live changed\) done: .*\.$/m)
  expect(result.stdout.trimEnd().split('\n').at(-1)).toMatch(/^(It changes no traffic|On the rehearsal fleet)/)
  expect(result.stderr).toMatch(/^plan: 1 step$/m)
  expect(result.stderr).toMatch(/^\[\+\d\d:\d\d\] \[step 1\] start /m)
  expect(result.stderr).toMatch(doneLine)
  expect(result.stderr).toMatch(/^\[\+\d\d:\d\d\] run: completed /m)
}
