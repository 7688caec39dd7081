import {FailedError} from '../errors.js'
import type {CommandHooks} from '../local/command-hooks.js'
import type {HookPort, HookResult, HookSpec, RestartAdapter, RestartAdapters, Target, Unfilled} from '../ports/control-plane.js'

/**
 * A live run's restarts and remediations: a runbook's command runs on this host, and an AWS
 * adapter (ssm, ec2-reboot, ecs-replace) through the family's calls. A runbook whose targets are
 * not on AWS has no adapters; naming one is refused before anything changes.
 */
export class Restarts implements HookPort {
  constructor(
    private readonly commands: CommandHooks,
    private readonly adapters: RestartAdapters = {},
  ) {}

  async run(kind: 'restart' | 'remediate', hook: HookSpec, target: Target, signal?: AbortSignal): Promise<HookResult | void> {
    if (hook.with === 'command') return this.commands.run(kind, hook, target, signal)
    return this.adapter(hook).run(hook, target, signal)
  }

  async finish(kind: 'restart' | 'remediate', hook: HookSpec, target: Target, since: Date, signal?: AbortSignal): Promise<HookResult | void> {
    // A command cannot be asked whether it ran: it counts as run (see HookPort.finish).
    if (hook.with === 'command') return undefined
    return this.adapter(hook).finish(hook, target, since, signal)
  }

  async unfilled(hook: HookSpec, targets: Target[], signal?: AbortSignal): Promise<Unfilled[]> {
    return hook.with === 'command' ? this.commands.unfilled(hook, targets, signal) : []
  }

  async refusals(hook: HookSpec, targets: Target[], signal?: AbortSignal): Promise<string[]> {
    if (hook.with === 'command') return []
    if (!this.adapters[hook.with]) return [noAdapter(hook)]
    return (await this.adapter(hook).refusals?.(hook, targets, signal)) ?? []
  }

  async begun(hook: HookSpec, target: Target, signal?: AbortSignal): Promise<boolean | undefined> {
    if (hook.with === 'command' || !this.adapters[hook.with]) return undefined
    return this.adapter(hook).begun?.(hook, target, signal)
  }

  private adapter<S extends Exclude<HookSpec, {with: 'command'}>>(hook: S): RestartAdapter<S> {
    const adapter = this.adapters[hook.with] as RestartAdapter<S> | undefined
    if (!adapter) throw new FailedError(noAdapter(hook))
    return adapter
  }
}

const noAdapter = (hook: HookSpec): string =>
  `${hook.with} restarts targets through AWS, and this runbook's pools are not AWS target groups: restart them with a command`
