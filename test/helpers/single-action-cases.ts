import {expect} from 'vitest'
import type {CliResult} from './cli.js'

// The single-action commands as a user types them, shared by the tests that run them through the
// CLI in process (test/commands/single-actions.test.ts, test/cli/actions.test.ts).

export const ramp = [
  'ramp',
  '--set',
  'west',
  '--schedule',
  '1,5,25,50',
  '--bake',
  '60',
  '--gate-metric',
  'error-rate',
  '--gate-threshold',
  '1',
  '--gate-pool',
  'west',
  '--scenario',
  'two-regions',
]
// Refused the same way by both tiers (under --json too): a gate threshold names no metric to judge.
export const gateThresholdWithoutMetric = 'ramp --set west --schedule 1,5,50 --bake 60 --gate-threshold 1 --scenario two-regions --dry-run'.split(' ')
export const cycle = ['cycle', '--pool', 'east', '--batch', '2', '--budget', '10%', '--restart', '/usr/local/bin/restart-api {id}', '--scenario', 'two-regions']

/** Every single-action command, as a user would type it for a rehearsal (less --dry-run). */
export const commands: Array<{name: string; args: string[]; done: RegExp; live?: string; more?: (r: CliResult) => void}> = [
  {name: 'freeze', args: ['freeze', '--reason', 'x'], done: /^\[\+\d\d:\d\d\] \[step 1\] done frozen by .*: x$/m},
  {name: 'unfreeze', args: ['unfreeze'], done: /^\[\+\d\d:\d\d\] \[step 1\] done nothing to unfreeze/m},
  {
    name: 'restrict',
    args: ['restrict', '--type', 'background-sync', '--path', '/sync/*', '--scenario', 'outlook-recovery'],
    done: /^\[\+\d\d:\d\d\] \[step 1\] done background-sync traffic now gets 503 with Retry-After: \d+$/m,
    live: '--listener (or --haproxy-socket and --restrict-map)',
  },
  {
    name: 'lift',
    args: ['lift', '--type', 'background-sync', '--scenario', 'outlook-recovery'],
    done: /^\[\+\d\d:\d\d\] \[step 1\] done nothing to lift: background-sync is not restricted$/m,
    live: '--listener (or --haproxy-socket and --restrict-map)',
  },
  {
    name: 'ramp',
    args: ramp,
    // The last stage's gate window goes on the step's end line.
    done: /^\[\+\d\d:\d\d\] \[step 1\] done west at 50% — gate error-rate ≤ 1% over 60 s \(west\): 6\/6 passes, last 0\.00%, 60 s \(west 50%\)$/m,
    live: '--zone, --record and --sets',
    more({stderr}) {
      // One DNS change per step of the schedule, ending with west at 50%.
      const changes = stderr.split('\n').filter((l) => /^\[\+\d\d:\d\d\] \[step 1\] (start .* — )?change weights /.test(l))
      expect(changes).toHaveLength(4)
      expect(changes.at(-1)).toMatch(/→ \{(west:50,east:50|east:50,west:50)\}$/)
      // Each bake starts once the clients have moved (a TTL of 60 s): the split served is said with it.
      expect(stderr).toMatch(
        /progress west at 50% \(east=50 west=50\); west served \d+(\.\d)?% of [\d,]+ rps against 50% set, \d+ s after the change, baking 60 s$/m,
      )
    },
  },
  {name: 'cycle', args: cycle, done: /^\[\+\d\d:\d\d\] \[step 1\] done cycled 20 targets in 10 batches$/m, live: '--target-group POOL=ARN'},
]
