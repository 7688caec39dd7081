import {RuntimeError, oneLine, type RuntimeApi} from './runtime.js'

export interface MapEntry {
  key: string
  value: string
}

/**
 * A map file HAProxy loaded (named by the file path the config gives, as `show map` lists it).
 * Changes replace the whole map in one `commit map`: HAProxy's versioned maps (2.4+) let sluice
 * build the next version beside the live one and swap it in atomically, so requests see either
 * every entry of a change or none. HAProxy keeps runtime changes in memory only: a reload or
 * restart loads the file again.
 */
export class RuntimeMap {
  constructor(
    private readonly api: RuntimeApi,
    readonly file: string,
  ) {}

  get label(): string {
    return `haproxy map ${this.file} (${this.api.label})`
  }

  async entries(signal?: AbortSignal): Promise<MapEntry[]> {
    const command = `show map ${this.file}`
    const answer = await this.api.send(command, signal)
    if (/^Unknown map identifier/m.test(answer))
      throw new RuntimeError(
        this.api.label,
        command,
        `was refused: HAProxy has loaded no map ${this.file} (the config must use it, e.g. map_beg(${this.file}))`,
      )
    const out: MapEntry[] = []
    for (const line of answer.split('\n')) {
      // `0x55d0c0a1b2c0 key value`: the entry's address, its key, then the value (which may hold spaces).
      const m = /^0x[0-9a-f]+ (\S+)(?: (.*))?$/.exec(line.trim())
      if (m) out.push({key: m[1], value: m[2] ?? ''})
      else if (line.trim() !== '') throw new RuntimeError(this.api.label, command, `answered a line that is not a map entry: ${oneLine(line)}`)
    }
    return out
  }

  /** Swaps in `entries` as the map's whole contents in one atomic commit. */
  async replace(entries: MapEntry[], signal?: AbortSignal): Promise<void> {
    for (const {key, value} of entries)
      if (/\s/.test(key) || /[\n\r]/.test(value))
        throw new RuntimeError(this.api.label, `add map ${this.file}`, `was not sent: the key "${key}" holds white space`)
    const prepare = `prepare map ${this.file}`
    const answer = await this.api.send(prepare, signal)
    const version = /New version created: (\d+)/.exec(answer)?.[1]
    if (!version) throw new RuntimeError(this.api.label, prepare, `was refused for map ${this.file}: ${oneLine(answer)}`)
    // An uncommitted version is invisible to traffic and replaced by the next prepare, so a
    // failure before the commit leaves the live map as it was.
    for (const {key, value} of entries) await this.api.change(`add map @${version} ${this.file} ${key} ${value}`, `map ${this.file}`, signal)
    await this.api.change(`commit map @${version} ${this.file}`, `map ${this.file}`, signal)
  }
}
