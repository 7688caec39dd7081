/**
 * Layer rules for sluice, checked by `npm run layers` (and so by `npm test` via pretest).
 *
 * Paths are relative to the repo root. An npm package is matched by where it resolves to
 * (node_modules/<name>/...) or, if it cannot be resolved, by its bare name.
 */

/** Regex for an npm package (or scope, e.g. '@aws-sdk') whether or not it resolved. */
const npm = (name) => `(^|/)node_modules/${name}/|^${name}(/|$)`

const AWS_SDK = npm('@aws-sdk')
const LISTR2 = npm('listr2')
const INQUIRER = npm('@inquirer')
const OCLIF = npm('@oclif')

const CORE = '^src/(runbook|loader|actions|pacing|engine)/'
const ADAPTERS = '^src/(aws|haproxy|local|prometheus|sim/adapters)/'
/** The composition roots: the only modules that pick concrete adapters and hand them to the engine. */
const WIRING = '^src/wiring/'
/** Each backend family's face to the core: names, locks, IAM and what it refuses (src/ports/backend.ts). */
const BACKEND_FACES = '^src/(aws|haproxy)/backend\\.ts$'

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'ports-only-errors-and-ports',
      comment: 'Ports are the interfaces every action and adapter agrees on, so they may depend only on the error base and on each other.',
      severity: 'error',
      from: {path: '^src/ports/'},
      to: {pathNot: ['^src/ports/', '^src/errors\\.ts$']},
    },
    {
      name: 'errors-import-nothing-of-ours',
      comment: 'The error base is imported by every layer, so importing any of our own modules from it would tie every layer to that module.',
      severity: 'error',
      from: {path: '^src/errors\\.ts$'},
      to: {path: '^(src|commands|bench)/'},
    },
    {
      name: 'input-only-errors-yaml-zod',
      comment: 'The YAML-with-positions reader sits under both runbooks and scenarios, so it may use only the error base, yaml and zod (plus Node built-ins).',
      severity: 'error',
      from: {path: '^src/input/'},
      to: {
        dependencyTypesNot: ['core'],
        pathNot: ['^src/input/', '^src/errors\\.ts$', npm('yaml'), npm('zod')],
      },
    },
    {
      name: 'core-not-to-outer-layers',
      comment: 'The domain core (runbook, actions, engine) talks to the world only through ports, so it must not reach into the simulator, adapters, the way back, live wiring, state, reports, the CLI, commands or bench.',
      severity: 'error',
      from: {path: CORE},
      to: {
        path: '^(src/(sim|aws|haproxy|local|prometheus|live|way-back|wiring|state|report|cli)/|commands/|bench/)',
        pathNot: BACKEND_FACES,
      },
    },
    {
      name: 'core-floors',
      comment: 'Inside the core, each floor uses only those below it: the loader uses the actions, which use what a runbook is; the engine runs the actions. A runbook never knows its actions, and an action never knows the engine that runs it.',
      severity: 'error',
      from: {path: '^src/runbook/'},
      to: {path: '^src/(loader|actions|pacing|engine)/'},
    },
    {
      name: 'pacing-below-actions',
      comment: 'How much a pool can take is one rule that actions, tune and the way back ask; it knows no action, loader or engine.',
      severity: 'error',
      from: {path: '^src/pacing/'},
      to: {path: '^src/(loader|actions|engine)/'},
    },
    {
      name: 'actions-not-to-engine-or-loader',
      comment: 'An action gets what it needs from its ActionContext; the engine and the loader sit above it.',
      severity: 'error',
      from: {path: '^src/actions/'},
      to: {path: '^src/(engine|loader)/'},
    },
    {
      name: 'action-folders-stand-alone',
      comment: "An action's folder holds all of it, so it reaches no other action's folder (restrict and lift, freeze and unfreeze: see the rules below).",
      severity: 'error',
      from: {path: '^src/actions/([^/]+)/', pathNot: '^src/actions/(restrict|lift|freeze|unfreeze)/'},
      to: {path: '^src/actions/[^/]+/', pathNot: '^src/actions/$1/'},
    },
    {
      name: 'restrict-and-lift-keep-to-their-pair',
      comment: 'lift takes away the rule restrict made, so the two share it (restrict/restriction.ts) and reach no other action.',
      severity: 'error',
      from: {path: '^src/actions/(restrict|lift)/'},
      to: {path: '^src/actions/[^/]+/', pathNot: '^src/actions/(restrict|lift)/'},
    },
    {
      name: 'freeze-and-unfreeze-keep-to-their-pair',
      comment: 'unfreeze lifts the freeze record freeze set, so the two share it and reach no other action.',
      severity: 'error',
      from: {path: '^src/actions/(freeze|unfreeze)/'},
      to: {path: '^src/actions/[^/]+/', pathNot: '^src/actions/(freeze|unfreeze)/'},
    },
    {
      name: 'way-back-only-core-and-ports',
      comment: 'The way back (undo, step back, the ramped way back, what a run changed) is used by live runs, rehearsals and drills alike, so of our modules it may use only the core, the ports and the shared text; reaching a live run, the wiring, state, an adapter or a report would tie every rollback to one of them.',
      severity: 'error',
      from: {path: '^src/way-back/'},
      to: {
        path: '^(src|commands|bench)/',
        pathNot: ['^src/(way-back|runbook|loader|actions|pacing|engine|ports)/', '^src/(errors|format)\\.ts$'],
      },
    },
    {
      name: 'wiring-not-to-live',
      comment: 'Live runs take their adapters from the wiring (wiring/live.ts), so the wiring sits under live/; a rehearsal or a drill that rolls back does it through the way back (src/way-back), never through a live run.',
      severity: 'error',
      from: {path: WIRING},
      to: {path: '^src/live/'},
    },
    {
      name: 'state-under-the-stores',
      comment: 'State (journal, leases, locks, controls, the freeze) sits under the stores that keep it (local files, DynamoDB), so of our modules it may use only the ports, input, process places and the error and text bases; a table or timeline of it for a person is a report (report/journal.ts, report/locks.ts).',
      severity: 'error',
      from: {path: '^src/state/'},
      to: {
        path: '^(src|commands|bench)/',
        pathNot: ['^src/(state|ports|input|platform)/', '^src/(errors|format)\\.ts$'],
      },
    },
    {
      name: 'report-not-to-wiring',
      comment: 'A report draws records the rooms below it make (a rehearsal is report/rehearsal.ts\'s Rehearsal, a drill drill/report.ts\'s DrillReport); the wiring fills them in from concrete adapters, so a report that reached into it, even for a type, would stand every chart on top of the adapters.',
      severity: 'error',
      from: {path: '^src/report/'},
      to: {path: [WIRING, '^src/runner\\.ts$']},
    },
    {
      name: 'core-not-to-terminal-sdk-or-oclif',
      comment: 'The domain core must run identically live, rehearsed and under test, so it must not load the AWS SDK, the terminal UI (listr2, inquirer) or oclif.',
      severity: 'error',
      from: {path: CORE},
      to: {path: [AWS_SDK, LISTR2, INQUIRER, OCLIF]},
    },
    {
      name: 'adapters-not-to-core-or-outer',
      comment: 'Adapters only implement ports, so they must not depend on the domain core or on anything that wires, reports or drives a run.',
      severity: 'error',
      from: {path: ADAPTERS},
      to: {path: '^(src/(runbook|engine|actions|cli|report|live|way-back)/|commands/)'},
    },
    {
      name: 'no-circular',
      comment: 'A cycle makes two modules one: neither can be read, tested or loaded without the other.',
      severity: 'error',
      from: {},
      to: {circular: true},
    },
    {
      name: 'only-wiring-picks-adapters',
      comment: 'One place knows which concrete adapters a run uses (live, rehearsal, drill, state); elsewhere an adapter is reached through a port, or its types only.',
      severity: 'error',
      from: {path: '^(src|commands)/', pathNot: [WIRING, ADAPTERS, '^src/drill/']},
      to: {path: ADAPTERS, pathNot: BACKEND_FACES, dependencyTypesNot: ['type-only']},
    },
    {
      name: 'backend-faces-stand-alone',
      comment: 'The core reads a backend family through its face; the face reaches no adapter, so reading a runbook loads no adapter code.',
      severity: 'error',
      from: {path: BACKEND_FACES},
      to: {pathNot: ['^src/ports/', '^src/input/', '^src/errors\\.ts$']},
    },
    {
      name: 'drill-bench-on-haproxy-only',
      comment: 'The drill is a bench built on HAProxy (its config, maps and stats); any other adapter it uses is picked by the wiring.',
      severity: 'error',
      from: {path: '^src/drill/'},
      to: {path: '^src/(aws|local|prometheus|sim/adapters)/', dependencyTypesNot: ['type-only']},
    },
    {
      name: 'platform-only-node',
      comment: 'Process places and scratch folders sit under state, the drill and HAProxy alike, so they may use only Node and the error base.',
      severity: 'error',
      from: {path: '^src/platform/'},
      to: {dependencyTypesNot: ['core'], pathNot: ['^src/platform/', '^src/errors\\.ts$']},
    },
    {
      name: 'haproxy-not-to-other-adapters',
      comment: 'Adapter families are swappable, so the HAProxy adapters must not depend on the AWS, local, Prometheus or simulated ones.',
      severity: 'error',
      from: {path: '^src/haproxy/'},
      to: {path: '^src/(aws|local|prometheus|sim)/'},
    },
    {
      name: 'drill-fleet-not-to-core-or-outer',
      comment: 'The drill\'s fleet, load generator and report card are a test bench the wiring drives; they must not run the engine or the way back, read state or reach the CLI.',
      severity: 'error',
      from: {path: '^src/drill/'},
      to: {path: '^(src/(engine|actions|live|way-back|state|cli|tune|sweep|wiring)/|commands/)', dependencyTypesNot: ['type-only']},
    },
    {
      name: 'sweep-only-sim',
      comment: 'A sweep is the simulator run over a grid: it must not reach the engine, runbooks, adapters, state, reports or the CLI.',
      severity: 'error',
      from: {path: '^src/sweep/'},
      to: {path: '^(src/(engine|actions|runbook|live|way-back|state|cli|report|drill|tune|aws|haproxy|local|prometheus)/|commands/)'},
    },
    {
      name: 'tune-not-to-live-or-adapters',
      comment: 'tune searches rehearsals: it may use the core and the simulator, never adapters, live runs, state or the CLI.',
      severity: 'error',
      from: {path: '^src/tune/'},
      to: {path: '^(src/(aws|haproxy|local|prometheus|live|state|cli|drill)/|commands/)'},
    },
    {
      name: 'aws-not-to-other-adapters',
      comment: 'Adapter families are swappable, so the AWS adapters must not depend on the local, Prometheus or simulated ones.',
      severity: 'error',
      from: {path: '^src/aws/'},
      to: {path: '^src/(local|prometheus|sim)/'},
    },
    {
      name: 'local-not-to-other-adapters',
      comment: 'Adapter families are swappable, so the local adapters must not depend on the AWS, Prometheus or simulated ones.',
      severity: 'error',
      from: {path: '^src/local/'},
      to: {path: '^src/(aws|prometheus|sim)/'},
    },
    {
      name: 'prometheus-not-to-other-adapters',
      comment: 'Adapter families are swappable, so the Prometheus adapter must not depend on the AWS, local or simulated ones.',
      severity: 'error',
      from: {path: '^src/prometheus/'},
      to: {path: '^src/(aws|local|sim)/'},
    },
    {
      name: 'sim-not-to-other-adapters',
      comment: 'The simulator must stand in for the real adapters, not use them, so nothing in src/sim may depend on the AWS, local or Prometheus adapters.',
      severity: 'error',
      from: {path: '^src/sim/'},
      to: {path: '^src/(aws|local|prometheus)/'},
    },
    {
      name: 'sim-not-to-core-or-outer',
      comment: 'The simulated fleet and its scenarios are driven by the engine from outside, so they must not depend on the core, live wiring, state, reports, the CLI or the AWS SDK.',
      severity: 'error',
      from: {path: '^src/sim/'},
      to: {
        path: ['^src/(engine|actions|runbook|live|way-back|state|cli|report)/', AWS_SDK],
      },
    },
    {
      name: 'report-not-to-cli-live-or-terminal',
      comment: 'Reports turn results into text and charts, so they must not depend on the CLI, commands, live adapters or the terminal UI and AWS SDK packages.',
      severity: 'error',
      from: {path: '^src/report/'},
      to: {
        path: ['^(src/(cli|aws|local|live)/|commands/)', LISTR2, INQUIRER, AWS_SDK],
      },
    },
    {
      name: 'src-not-to-commands',
      comment: 'Commands are the outermost layer that oclif loads, so library code under src must never depend on them.',
      severity: 'error',
      from: {path: '^src/'},
      to: {path: '^commands/'},
    },
    {
      name: 'only-cli-to-cli',
      comment: 'src/cli is the oclif glue for commands, so no other part of src may depend on it.',
      severity: 'error',
      from: {path: '^src/', pathNot: '^src/cli/'},
      to: {path: '^src/cli/'},
    },
    {
      name: 'commands-no-static-heavy-packages',
      comment: 'Every command is loaded for help and startup, so the AWS SDK, listr2 and inquirer may only be loaded lazily with import().',
      severity: 'error',
      from: {path: '^commands/'},
      to: {
        path: [AWS_SDK, LISTR2, INQUIRER],
        dependencyTypesNot: ['dynamic-import'],
      },
    },
    {
      name: 'aws-sdk-only-in-src-aws',
      comment: 'The AWS SDK is slow to load and only the AWS adapters need its types, so outside src/aws it may only be loaded lazily with import().',
      severity: 'error',
      from: {path: '^src/', pathNot: '^src/aws/'},
      to: {
        path: AWS_SDK,
        dependencyTypesNot: ['dynamic-import'],
      },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'A relative import that does not resolve is a broken build or a file moved without its importers, so it must fail fast.',
      severity: 'error',
      from: {},
      to: {couldNotResolve: true, path: '^\\.{1,2}/'},
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: {fileName: 'tsconfig.json'},
    doNotFollow: {path: 'node_modules'},
    // Only dist/ is excluded: excluding node_modules would also drop every edge *to* an npm
    // package, and then the package rules above could never fire. doNotFollow already keeps
    // the cruise from descending into node_modules.
    exclude: {path: '^dist/'},
    // Resolve npm packages through their package.json "exports" (e.g. @oclif/core has no
    // "main"), so a package import resolves to node_modules/<name>/... instead of
    // coming out unresolvable.
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
  },
}
