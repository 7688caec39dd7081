import {defineConfig} from 'vitest/config'

/**
 * Six projects, run together by `npm test` (`vitest run`), or alone with `npm run test:unit`,
 * `test:cli`, `test:live`, `test:haproxy`, `test:gameday` and `test:pack`:
 *
 * - unit: in process, no child process, no server: pure modules, the engine and each action with
 *   fake ports, the state stores on a temporary directory, the runbook loader, and each command
 *   through oclif's own test helpers.
 * - cli: starts processes or local servers but needs no AWS: the built CLI spawned as a user runs
 *   it (exit codes, signals, stdout and stderr apart), and the local hooks and Prometheus adapters.
 * - live: needs moto_server, started once for this project only by test/global-setup.ts.
 * - haproxy: a real HAProxy from the system package (.ci/run installs it) in front of sluice's
 *   loopback fleet, each started and stopped by its test file.
 * - gameday: whole incidents played end to end through the CLI against HAProxy and moto.
 * - pack: `npm pack` of the built package, installed from npm's cache into an empty folder and
 *   run from there. One file, most of it waiting on npm, so it runs beside the others.
 */
const processFiles = ['test/cli/**/*.test.ts', 'test/local/**/*.test.ts', 'test/prometheus/**/*.test.ts']
// In process although it sits under test/cli: it drives the terminal adapter on PassThrough streams.
const inProcessUnderCli = 'test/cli/terminal-io.test.ts'

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // Vitest's default on two cores is one worker, which runs every file in turn. The live and
    // spawned tests spend most of their time waiting on sleeps, child processes and moto, so more
    // workers overlap those waits. Measured on a quiet two-core machine (2026-12-02): 5 workers,
    // 258 s with the cores 62% busy; 8 workers, 206 s at 82%. Grown since with the drills and live
    // calibrate: 533–542 s on 2026-12-05 with the cores 94% busy, so now CPU-bound (more workers
    // cannot help; less CPU can: most of it is spawned CLIs).
    maxWorkers: 8,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          // @oclif/test captures what commands write to stdout and stderr; vitest must not take it first.
          disableConsoleIntercept: true,
          // Pure modules and fakes: files can share a worker's module cache instead of each
          // importing the engine, the simulator and oclif again.
          isolate: false,
          include: ['test/**/*.test.ts'],
          exclude: [
            'test/aws/**',
            'test/pack/**',
            'test/local/**',
            'test/prometheus/**',
            'test/haproxy/**',
            'test/drill/**',
            'test/gameday/**',
            'test/cli/**/!(terminal-io).test.ts',
          ],
        },
      },
      {
        extends: true,
        test: {
          name: 'cli',
          include: processFiles,
          // A spawned CLI costs about half a second of CPU; with every project running at once on
          // two cores, one can wait its turn for many seconds. A timeout here is a hang detector,
          // not a speed test (speed is measured by npm run bench).
          testTimeout: 120_000,
          exclude: [inProcessUnderCli],
        },
      },
      {
        extends: true,
        test: {
          name: 'live',
          include: ['test/aws/**/*.test.ts'],
          testTimeout: 120_000,
          globalSetup: ['test/global-setup.ts'],
        },
      },
      {
        extends: true,
        test: {
          // A real HAProxy (from the system package) and sluice's loopback fleet, started and
          // stopped by each test file; no moto.
          name: 'haproxy',
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
          include: ['test/gameday/**/*.test.ts'],
          testTimeout: 300_000,
          globalSetup: ['test/global-setup.ts'],
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
