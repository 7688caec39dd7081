import {it} from 'vitest'
import {rehearse} from '../../src/wiring/rehearsal.js'
import {loadRunbookFile} from '../../src/loader/load-runbook.js'
import {RecordingIO} from '../../test/helpers/fakes.js'
it('trace', async () => {
  const [file, from, to, step] = (process.env.TRACE ?? '').split(',')
  const {rehearsal} = await rehearse(loadRunbookFile(file), {operator: 'x', io: new RecordingIO('no-tty'), signal: new AbortController().signal}, {pace: null})
  const r = rehearsal.record
  const p = r.pools[0]
  const lines: string[] = []
  for (let t = +from; t < +to; t += +step) lines.push([t, 'demand', r.demand[t].toFixed(0), 'offered', r.offered[t].toFixed(0), 'served', r.served[t].toFixed(0), 'retries', r.retries[t].toFixed(0), 'rot', r.inRotation[t], 'mbx off', p.offered[t].toFixed(0), 'fail', p.failed[t].toFixed(0)].join(' '))
  console.log(lines.join('\n'))
})
