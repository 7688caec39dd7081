import {describe, expect, it} from 'vitest'
import {
  clockStamp,
  formatEvent,
  formatMetric,
  gateWindowText,
  groupedVerdictLines,
  mutationText,
  planLines,
  shortenArns,
  statusWord,
  stepName,
  verdictText,
} from '../src/format.js'
import type {GateVerdict, Mutation} from '../src/ports/io.js'

const verdict: GateVerdict = {
  step: 2,
  gate: 'error-rate ≤ 1% over 60 s (mailbox)',
  metric: 'error-rate',
  value: 0.25,
  threshold: 1,
  unit: '%',
  outcome: 'pass',
  at: 300,
  context: 'ramp 50%',
}

const intent: Mutation = {
  step: 1,
  phase: 'intent',
  kind: 'weights',
  resource: 'Z1 mail.example.com',
  before: {blue: 100, green: 0},
  after: {blue: 75, green: 25},
}

describe('formatMetric', () => {
  it('says no data for an empty window rather than a number', () => {
    expect(formatMetric(null, '%')).toBe('no data')
    expect(formatMetric(null, 'ms')).toBe('no data')
  })

  it('gives percentages two places, milliseconds none, anything else one, each with its unit', () => {
    expect(formatMetric(0, '%')).toBe('0.00%')
    expect(formatMetric(412.6, 'ms')).toBe('413 ms')
    expect(formatMetric(12.34, 'rps')).toBe('12.3 rps')
    expect(formatMetric(3, 'targets')).toBe('3.0 targets')
  })
})

describe('stepName and statusWord', () => {
  it('counts steps from 1', () => {
    expect(stepName(0)).toBe('step 1')
    expect(stepName(9)).toBe('step 10')
  })

  it('shouts every status that stops a run, and only those', () => {
    expect(statusWord('done')).toBe('done')
    expect(statusWord('skipped')).toBe('skipped')
    for (const status of ['failed', 'held', 'refused', 'interrupted', 'error'] as const) expect(statusWord(status)).toBe(status.toUpperCase())
  })
})

describe('verdictText', () => {
  it('names the gate, the measured value, the outcome and what the step was doing', () => {
    expect(verdictText(verdict)).toBe('gate error-rate ≤ 1% over 60 s (mailbox): 0.25% pass (ramp 50%)')
  })

  it('says no data for a verdict without a value, and leaves out an empty context', () => {
    expect(verdictText({...verdict, value: null, outcome: 'inconclusive', context: ''})).toBe('gate error-rate ≤ 1% over 60 s (mailbox): no data inconclusive')
  })
})

describe('groupedVerdictLines', () => {
  it('puts verdicts of the same step, context and gate on one line, in order, and keeps the others apart', () => {
    const lines = groupedVerdictLines([
      verdict,
      {...verdict, context: 'ramp 100%', value: 2, outcome: 'fail'},
      {...verdict, value: null, outcome: 'inconclusive'},
    ])
    expect(lines).toEqual([
      'step 3 · ramp 50% · error-rate ≤ 1% over 60 s (mailbox): 0.25% ✓, no data ?',
      'step 3 · ramp 100% · error-rate ≤ 1% over 60 s (mailbox): 2.00% ✗',
    ])
  })

  it('folds a run of the same value and verdict, and keeps a change in the middle of one apart', () => {
    const at50 = (value: number, outcome: GateVerdict['outcome'] = 'pass') => ({...verdict, value, outcome})
    expect(groupedVerdictLines([...Array(5).fill(at50(0)), at50(1.5, 'fail'), at50(0), at50(0), at50(0.25)])).toEqual([
      'step 3 · ramp 50% · error-rate ≤ 1% over 60 s (mailbox): 0.00% ✓ ×5, 1.50% ✗, 0.00% ✓ ×2, 0.25% ✓',
    ])
  })

  it('has nothing to say without verdicts', () => {
    expect(groupedVerdictLines([])).toEqual([])
  })

  it("ends a counts gate's line with its last verdict's sentence, which sums up every interval before it", () => {
    const said = 'green 0.5% of 10,000 against blue 0.5% of 90,000: better by 0.0 points, margin 1, >99.9% sure → pass'
    expect(
      groupedVerdictLines([
        {...verdict, value: 0.5, outcome: 'inconclusive'},
        {...verdict, value: 0.5, said},
      ]),
    ).toEqual([`step 3 · ramp 50% · error-rate ≤ 1% over 60 s (mailbox): 0.50% ?, 0.50% ✓; last: ${said}`])
  })
})

describe('mutationText', () => {
  it('shows an intent as before → after, compactly, without JSON quotes', () => {
    expect(mutationText(intent)).toBe('change weights Z1 mail.example.com: {blue:100,green:0} → {blue:75,green:25}')
  })

  it('shows a change with only one side, and nested values', () => {
    expect(mutationText({...intent, kind: 'register', before: undefined, after: {targets: ['i-1', 'i-2']}})).toBe(
      'change register Z1 mail.example.com: {targets:[i-1,i-2]}',
    )
    expect(mutationText({...intent, kind: 'deregister', before: ['i-1'], after: undefined})).toBe('change deregister Z1 mail.example.com: was [i-1]')
    expect(mutationText({...intent, kind: 'freeze', before: undefined, after: undefined})).toBe('change freeze Z1 mail.example.com')
    expect(mutationText({...intent, before: null, after: {blue: null}})).toBe('change weights Z1 mail.example.com: null → {blue:null}')
  })

  it('says why a change failed, or that nobody said', () => {
    expect(mutationText({...intent, phase: 'outcome', ok: false, error: 'Throttling: rate exceeded'})).toBe(
      'change weights Z1 mail.example.com failed: Throttling: rate exceeded',
    )
    expect(mutationText({...intent, phase: 'outcome', ok: false})).toBe('change weights Z1 mail.example.com failed: no reason given')
  })

  it('has no line for a change that went through', () => {
    expect(mutationText({...intent, phase: 'outcome', ok: true})).toBeUndefined()
  })
})

describe('planLines', () => {
  it('counts the steps, singular for one, and lists each step with its details', () => {
    expect(planLines([{index: 0, action: 'freeze', title: 'Freeze changes', details: []}])).toEqual(['plan: 1 step', '  1. Freeze changes'])
    expect(
      planLines([
        {index: 0, action: 'freeze', title: 'Freeze changes', details: []},
        {index: 1, action: 'ramp', title: 'Ramp blue', details: ['blue 25% → 100%', 'bake 60 s']},
      ]),
    ).toEqual(['plan: 2 steps', '  1. Freeze changes', '  2. Ramp blue: blue 25% → 100%; bake 60 s'])
  })
})

describe('shortenArns', () => {
  const listener = 'arn:aws:elasticloadbalancing:eu-west-1:123456789012:listener/app/outlook-edge/50dc6c495c0c9188/f2f7dc8efc522ab2'
  const group = 'arn:aws:elasticloadbalancing:eu-west-1:123456789012:targetgroup/mailbox/6d0ecf831eec9f09'
  it('names a target group, load balancer, listener and rule by name, a listener and rule keeping their own ids', () => {
    expect(shortenArns(`mailbox (${group}) in batches`)).toBe('mailbox (targetgroup/mailbox) in batches')
    expect(shortenArns(`on ${listener}`)).toBe('on listener/outlook-edge/f2f7dc8efc522ab2')
    expect(shortenArns('arn:aws:elasticloadbalancing:us-east-1:1:loadbalancer/app/edge/50dc6c495c0c9188')).toBe('loadbalancer/edge')
    expect(shortenArns(`${listener.replace('listener/', 'listener-rule/')}/9683b2d02a6cabee`)).toBe(
      'listener-rule/outlook-edge/f2f7dc8efc522ab2/9683b2d02a6cabee',
    )
  })
  it("keeps other services' resource part, and text without an ARN as it is", () => {
    expect(shortenArns('zone arn:aws:route53:::hostedzone/Z0123; done')).toBe('zone hostedzone/Z0123; done')
    expect(shortenArns('arn is a word; aws:elasticloadbalancing too')).toBe('arn is a word; aws:elasticloadbalancing too')
  })
  it('shortens the ARNs in a printed plan', () => {
    expect(planLines([{index: 0, action: 'restrict', title: 'Restrict', details: [`on ${listener}`]}])[1]).toBe(
      '  1. Restrict: on listener/outlook-edge/f2f7dc8efc522ab2',
    )
  })
})

describe('clockStamp', () => {
  it('is scenario time in a rehearsal, hours only when there are any', () => {
    expect(clockStamp(0, 'scenario')).toBe('[+00:00]')
    expect(clockStamp(1384.7, 'scenario')).toBe('[+23:04]')
    expect(clockStamp(3723, 'scenario')).toBe('[+1:02:03]')
  })

  it('is UTC wall time live', () => {
    expect(clockStamp(Date.UTC(2026, 10, 30, 14, 3, 27, 900) / 1000, 'wall')).toBe('[14:03:27Z]')
  })
})

describe('gateWindowText', () => {
  it('says a window in one line: passes in a row of all verdicts, the last value, its length', () => {
    expect(gateWindowText(verdict, 3, 9, 90.4)).toBe('gate error-rate ≤ 1% over 60 s (mailbox): 3/9 passes, last 0.25%, 90 s (ramp 50%)')
  })

  it('says a counts window by its last sentence', () => {
    const said = 'green 3.0% of 10,000 against blue 0.5% of 90,000: worse by 2.5 points, margin 1, >99.9% sure → fail'
    expect(gateWindowText({...verdict, said}, 0, 5, 300)).toBe(`gate error-rate ≤ 1% over 60 s (mailbox): ${said}, 300 s (ramp 50%)`)
  })
})

describe('formatEvent', () => {
  it('labels each step event with the step a person counts', () => {
    expect(formatEvent({type: 'step-start', step: 0, title: 'Freeze changes', at: 0})).toEqual(['[step 1] start Freeze changes'])
    expect(formatEvent({type: 'verdict', verdict})).toEqual(['[step 3] gate error-rate ≤ 1% over 60 s (mailbox): 0.25% pass (ramp 50%)'])
    expect(formatEvent({type: 'mutation', mutation: {...intent, phase: 'outcome', ok: false, error: 'denied'}, at: 1})).toEqual([
      '[step 2] change weights Z1 mail.example.com failed: denied',
    ])
  })

  it('has no line for a successful change, and no trailing space for an end without a message', () => {
    expect(formatEvent({type: 'mutation', mutation: {...intent, phase: 'outcome', ok: true}, at: 1})).toEqual([])
    expect(formatEvent({type: 'step-end', step: 1, status: 'held', message: '', at: 2})).toEqual(['[step 2] HELD'])
    expect(formatEvent({type: 'run-end', outcome: 'completed', message: ''})).toEqual(['run: completed'])
  })

  it("keeps a warning without a step apart from a step's warning", () => {
    expect(formatEvent({type: 'warning', message: 'clock skew'})).toEqual(['warning: clock skew'])
    expect(formatEvent({type: 'warning', step: 0, message: 'metrics lag'})).toEqual(['[step 1] warning metrics lag'])
  })

  it('prints the plan as the plan lines', () => {
    const steps = [{index: 0, action: 'wait', title: 'Wait', details: ['60 s']}]
    expect(formatEvent({type: 'plan', runbook: 'r', steps})).toEqual(planLines(steps))
  })
})
