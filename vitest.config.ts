import {defineConfig} from 'vitest/config'
import {BaseSequencer, type TestSpecification} from 'vitest/node'

/**
 * Two tiers, as the Salesforce CLI keeps `test` and `test:nuts`:
 *
 * The fast tier, `npm test` (projects unit and smoke):
 * - unit: everything in process: pure modules, the engine and each action with fake ports, the
 *   adapters against fakes of their clients, the state stores on a temporary directory, the loaders,
 *   and every command through the CLI with `sluiceInProcess` (test/helpers/command.ts), which gives
 *   the exit code, stdout and stderr apart as a spawned CLI would.
 * - smoke (test/smoke/): the few things only a real process shows: each exit code as a shell sees
 *   it, stdout and stderr as two streams, stop signals, what the process loads (no AWS SDK on
 *   --help and dry runs), a real terminal (prompts, the refusal without one, colour), the shells'
 *   completion scripts, and the README's and docs' transcripts run as written.
 *
 * The end-to-end tier, `npm run test:e2e` (projects e2e, live, haproxy, gameday, pack):
 * - e2e (test/e2e/): spawned cases that are about processes dying or machines straining: kill -9,
 *   a reader gone mid-output, special files measured by their memory, CPU wait.
 * - live: needs moto_server, started once for this project only by test/global-setup.ts.
 * - haproxy: a real HAProxy (from the system package, .ci/run installs it) in front of sluice's
 *   loopback fleet, and the drills on it; each started and stopped by its test file.
 * - gameday: whole incidents played end to end through the CLI against HAProxy and moto.
 * - pack: `npm pack` of the built package, installed from npm's cache into an empty folder and run.
 * - browser: `sluice serve`'s page in Debian's Chromium driven by playwright-core (.ci/run installs
 *   the browser; nothing is downloaded), each file saving its screenshots to .artifacts/.
 *
 * One file alone: `npx vitest run test/path/file.test.ts` (its project is found from its path).
 */
/**
 * The e2e tier's longest files, started before the rest. Vitest orders files project by project
 * (browser, e2e, gameday, haproxy, live, pack), so on a fresh clone the judge drills, the longest,
 * started 150 s in and ended the tier alone 350 s later (measured 2026-12-07: 506 s, every other
 * file done by 440 s). Started first, the longest overlap the many short ones instead.
 */
const longestFirst = [
  'test/drill/judge-drills.test.ts',
  'test/gameday/kill-trials.test.ts',
  'test/gameday/outlook-aws.test.ts',
  'test/haproxy/cli.test.ts',
  'test/gameday/haproxy-metadata.test.ts',
  'test/drill/drill-cli.test.ts',
]

class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files)
    const rank = (f: TestSpecification) => {
      const i = longestFirst.findIndex((path) => f.moduleId.endsWith(path))
      return i === -1 ? longestFirst.length : i
    }
    // Array.prototype.sort is stable: the rest keep vitest's order.
    return sorted.sort((a, b) => rank(a) - rank(b))
  }
}

const endToEnd = ['test/e2e/**', 'test/aws/**', 'test/haproxy/**', 'test/drill/**', 'test/gameday/**', 'test/pack/**', 'test/browser/**']

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // The e2e tier mostly waits on sleeps, child processes, HAProxy and moto, so more workers than
    // cores overlap those waits. The fast tier is CPU-bound (in process): `npm test` asks for 4,
    // measured 2026-12-06 on two cores at 74 s against 96 s with 8 (each worker loads oclif, the
    // engine and the simulator once).
    maxWorkers: 8,
    sequence: {sequencer: LongestFirst},
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          // Commands write through process.stdout and process.stderr, which sluiceInProcess takes over
          // for their run; vitest must not intercept them first.
          disableConsoleIntercept: true,
          // Files share a worker's module cache instead of each importing the engine, the
          // simulator and oclif again. sluiceInProcess puts back the environment, the working
          // directory and the exit code after each command.
          isolate: false,
          // A hang detector, not a speed test: a command in process (tune, a long rehearsal) can take
          // tens of seconds of CPU on two cores shared with the rest of the suite.
          testTimeout: 120_000,
          include: ['test/**/*.test.ts'],
          exclude: ['test/smoke/**', ...endToEnd],
        },
      },
      {
        extends: true,
        test: {
          name: 'smoke',
          include: ['test/smoke/**/*.test.ts'],
          // A spawned CLI costs a few tenths of a CPU second; with the unit project beside it on
          // two cores, one can wait its turn for many seconds. A hang detector, not a speed test.
          testTimeout: 120_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          testTimeout: 120_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'live',
          // Most commands run in process through sluiceInProcess (a spawned CLI with the AWS SDK costs
          // half a CPU second); vitest must not intercept their output first.
          disableConsoleIntercept: true,
          // Its files share a worker's module cache (the AWS SDK, the fixtures) rather than each
          // loading them again: measured 2026-12-06, 196 s instead of 298 s and 8% less CPU. A
          // file that changes process-wide state (process.env, a module's) puts it back.
          isolate: false,
          include: ['test/aws/**/*.test.ts'],
          testTimeout: 120_000,
          globalSetup: ['test/global-setup.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'haproxy',
          // Commands against HAProxy run in process (sluiceInProcess); the drills stay spawned.
          disableConsoleIntercept: true,
          include: ['test/haproxy/**/*.test.ts', 'test/drill/**/*.test.ts'],
          testTimeout: 120_000,
        },
      },
      {
        extends: true,
        test: {
          // Game days: whole incidents played through the CLI from several processes (operator, a
          // second operator, a pipeline) against a real HAProxy or moto, each writing its timeline
          // (`sluice journal RUN --markdown`) to .gameday/ (or $SLUICE_GAMEDAY_DIR).
          name: 'gameday',
          // The operators' commands are spawned; the readings a test checks between them (a trial's
          // journal and locks, the timeline written at the end) run in process.
          disableConsoleIntercept: true,
          include: ['test/gameday/**/*.test.ts'],
          testTimeout: 300_000,
          globalSetup: ['test/global-setup.ts'],
        },
      },
      {
        extends: true,
        test: {
          name: 'browser',
          include: ['test/browser/**/*.test.ts'],
          testTimeout: 120_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'pack',
          include: ['test/pack/**/*.test.ts'],
          testTimeout: 120_000,
        },
      },
    ],
  },
})
