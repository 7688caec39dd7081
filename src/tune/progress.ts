import {stepName} from '../format.js'
import type {TuneEvent} from './tune.js'

/**
 * What tune says on stderr while it searches. On a terminal, one line redrawn in place (what it
 * is doing, rehearsals so far); in a log, a line per phase and per ramp tuned; under --json, nothing.
 */
export function tuneProgress(mode: 'tty' | 'lines' | 'silent', write: (text: string) => void): {onEvent: (event: TuneEvent) => void; done: () => void} {
  if (mode === 'silent') return {onEvent() {}, done() {}}
  let doing = 'starting'
  let rehearsals = 0
  const started = Date.now()
  let drawn = 0
  const redraw = () => {
    drawn = Date.now()
    write(`\r\u001B[K${doing} · ${rehearsals} rehearsals · ${((drawn - started) / 1000).toFixed(1)} s`)
  }
  const say = (line: string) => (mode === 'tty' ? ((doing = line), redraw()) : write(`${line}\n`))
  return {
    onEvent(event) {
      switch (event.type) {
        case 'phase':
          say(event.message)
          break
        case 'rehearsal':
          rehearsals = event.count
          // Hundreds of rehearsals a second: redrawn ten times a second is enough to read.
          if (mode === 'tty' && Date.now() - drawn >= 100) redraw()
          break
        case 'ramp':
        case 'ramp-deferred': {
          const found = event.type === 'ramp-deferred'
            ? `left for the next pass: the rehearsal first misses at ${stepName(event.failedStep)}, ${event.before ? 'before this ramp' : 'after a later ramp has begun'}`
            : event.best ? `[${event.best.schedule.join(', ')}] bake ${event.best.bake} s, full traffic at ${event.score?.secondsToFullTraffic} s` : 'nothing faster that passes'
          const line = `pass ${event.pass} · ${event.site.title}: ${event.type === 'ramp' ? `${event.tried} tried, ` : ''}${found}`
          if (mode !== 'tty') write(`${line}\n`)
          else {
            // A ramp's result stays on screen; the live line moves below it.
            write(`\r\u001B[K${line}\n`)
            doing = `pass ${event.pass}: searching`
            redraw()
          }
          break
        }
      }
    },
    done() {
      if (mode === 'tty') write('\r\u001B[K')
    },
  }
}
