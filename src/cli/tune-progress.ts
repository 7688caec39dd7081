import {stepName} from '../format.js'
import type {TuneEvent} from '../tune/tune.js'
import {StatusLine} from './terminal/status-line.js'

/**
 * What tune says on stderr while it searches. On a terminal, one line redrawn in place (what it
 * is doing, rehearsals so far); in a log, a line per phase and per ramp tuned; under --json, nothing.
 */
export function tuneProgress(mode: 'tty' | 'lines' | 'silent', write: (text: string) => void): {onEvent: (event: TuneEvent) => void; done: () => void} {
  if (mode === 'silent') return {onEvent() {}, done() {}}
  const status = new StatusLine(write, mode === 'tty')
  let doing = 'starting'
  let rehearsals = 0
  const started = Date.now()
  const redraw = (now = true) => status.show(`${doing} · ${rehearsals} rehearsals · ${((Date.now() - started) / 1000).toFixed(1)} s`, now)
  const say = (line: string) => (status.live ? ((doing = line), redraw()) : status.keep(line))
  return {
    onEvent(event) {
      switch (event.type) {
        case 'phase':
          say(event.message)
          break
        case 'rehearsal':
          rehearsals = event.count
          // Hundreds of rehearsals a second: the status line redraws itself ten times a second at most.
          redraw(false)
          break
        case 'ramp':
        case 'ramp-deferred': {
          const found =
            event.type === 'ramp-deferred'
              ? `left for the next pass: the rehearsal first misses at ${stepName(event.failedStep)}, ${event.before ? 'before this ramp' : 'after a later ramp has begun'}`
              : event.best
                ? `[${event.best.schedule.join(', ')}] bake ${event.best.bake} s, full traffic at ${event.score?.secondsToFullTraffic} s`
                : 'nothing faster that passes'
          // A ramp's result stays (above the live line on a terminal), and the search moves on.
          status.keep(`pass ${event.pass} · ${event.site.title}: ${event.type === 'ramp' ? `${event.tried} tried, ` : ''}${found}`)
          if (status.live) {
            doing = `pass ${event.pass}: searching`
            redraw()
          }
          break
        }
      }
    },
    done: () => status.end(),
  }
}
