import {readFile, writeFile} from 'node:fs/promises'
import {join} from 'node:path'

/**
 * The dynamic layer sluice adds to the bash and zsh scripts @oclif/plugin-autocomplete writes.
 * Those complete commands and flags from a list fixed when they were written; this layer asks
 * `sluice complete` (src/cli/completion.ts) first, at each word after the command, and falls
 * back to them when it prints nothing. The plugin writes its scripts afresh on every `sluice
 * autocomplete` (and --refresh-cache); a postrun hook (src/cli/autocomplete-hook.ts) then adds
 * this layer to them.
 */

/** Marks a script that has the layer already, so adding it twice changes nothing. */
export const layerMark = 'sluice complete: argument and flag values'

/** The bash layer, appended: a function that asks `sluice complete`, registered in place of the plugin's. */
export function bashLayer(bin: string): string {
  const f = `_${bin}_values_autocomplete`
  return `
# ${layerMark} (runbooks, run ids, scenarios, setups), asked of the CLI
# itself; anything else falls back to the function above.
${f}()
{
  local cur="\${COMP_WORDS[COMP_CWORD]}" out= line kind= IFS=$' \\t\\n'
  if (( COMP_CWORD >= 2 )); then
    out=$("\${COMP_WORDS[0]}" complete -- "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null)
  fi
  if [[ "$out" != :* ]]; then
    _${bin}_autocomplete
    return
  fi
  COMPREPLY=()
  while IFS= read -r line; do
    if [[ -z "$kind" ]]; then kind=$line; else COMPREPLY+=("$line"); fi
  done <<< "$out"
  if [[ "$kind" == ":files" ]]; then
    [[ "$cur" == "=" ]] && cur=
    compopt -o filenames 2>/dev/null
    while IFS= read -r line; do
      [[ -n "$line" ]] && COMPREPLY+=("$line")
    done < <(compgen -d -- "$cur"; compgen -f -X '!*.yaml' -- "$cur"; compgen -f -X '!*.yml' -- "$cur")
  else
    # Run ids come running first, then newest first: keep that order where bash can.
    compopt -o nosort 2>/dev/null
  fi
  return 0
}
complete -F ${f} ${bin}
`
}

/**
 * The zsh layer: the plugin's function is renamed \`_BIN_static\` and a \`_BIN\` that asks
 * \`sluice complete\` first takes its place; the file still ends by calling \`_BIN\`, as an
 * autoloaded completion file must.
 */
export function zshLayer(bin: string): string {
  return `
# ${layerMark} (runbooks, run ids, scenarios, setups), asked of the CLI
# itself; anything else falls back to _${bin}_static, the plugin's.
_${bin}() {
  local -a lines candidates
  if (( CURRENT > 2 )); then
    lines=("\${(@f)$(\${words[1]} complete -- "\${(@)words[2,CURRENT]}" 2>/dev/null)}")
  fi
  if [[ "\${lines[1]}" != :* ]]; then
    _${bin}_static "$@"
    return
  fi
  candidates=("\${(@)lines[2,-1]}")
  [[ "\${words[CURRENT]}" == --*=* ]] && compset -P '*='
  local ret=1
  (( \${#candidates} )) && compadd -V ${bin}-values -- "\${(@)candidates}" && ret=0
  if [[ "\${lines[1]}" == :files ]]; then
    _files -g '*.(yaml|yml)(-.)' && ret=0
  fi
  return ret
}

_${bin} "$@"
`
}

/** The plugin's zsh script with the layer in: its \`_BIN() {\` renamed, its closing call replaced. */
export function withZshLayer(script: string, bin: string): string | null {
  const definition = `\n_${bin}() {\n`
  const call = `\n_${bin}\n`
  if (script.includes(layerMark) || !script.includes(definition) || !script.trimEnd().endsWith(call.trimEnd())) return null
  const body = script.trimEnd().slice(0, -call.trimEnd().length)
  return `${body.replace(definition, `\n_${bin}_static() {\n`)}${zshLayer(bin)}`
}

/** The plugin's bash script with the layer appended, or null if it has it already or is not what the layer expects. */
export function withBashLayer(script: string, bin: string): string | null {
  if (script.includes(layerMark) || !script.includes(`_${bin}_autocomplete()`)) return null
  return `${script.trimEnd()}\n${bashLayer(bin)}`
}

/** Adds the layer to the scripts the plugin wrote under its cache directory; a script it does not find, or does not recognise, is left as it is. */
export async function addDynamicLayer(cacheDir: string, bin: string): Promise<string[]> {
  const functions = join(cacheDir, 'autocomplete', 'functions')
  const scripts: Array<[string, (text: string, bin: string) => string | null]> = [
    [join(functions, 'bash', `${bin}.bash`), withBashLayer],
    [join(functions, 'zsh', `_${bin}`), withZshLayer],
  ]
  const changed: string[] = []
  for (const [file, layered] of scripts) {
    let text: string
    try {
      text = await readFile(file, 'utf8')
    } catch {
      continue
    }
    const next = layered(text, bin)
    if (next !== null) {
      await writeFile(file, next)
      changed.push(file)
    }
  }
  return changed
}
