import {describe, expect, it} from 'vitest'

import type {ChartPanel} from '../../src/report/chart.js'
import {renderSvg} from '../../src/report/svg.js'

function range(n: number): number[] {
  return Array.from({length: n}, (_, i) => i)
}

// Number of maximal runs of finite values, i.e. the polylines a series should produce.
function runs(values: number[]): number {
  let count = 0
  values.forEach((v, i) => {
    if (Number.isFinite(v) && (i === 0 || !Number.isFinite(values[i - 1]))) count++
  })
  return count
}

// Minimal well-formedness check: every opened element is closed in order.
function tagsBalanced(svg: string): boolean {
  const stack: string[] = []
  for (const m of svg.matchAll(/<(\/?)([a-zA-Z]+)[^>]*?(\/?)>/g)) {
    const [, closing, name, selfClosing] = m
    if (selfClosing) continue
    if (!closing) stack.push(name)
    else if (stack.pop() !== name) return false
  }
  return stack.length === 0
}

function polylines(svg: string): string[] {
  return [...svg.matchAll(/<polyline [^>]*points="([^"]*)"/g)].map((m) => m[1])
}

const a = [1, 2, NaN, NaN, 3, 4, 5, NaN, 6]
const b = [10, 20, 30, 40, 50, 60, 70, 80, 90]
const c = [NaN, NaN, NaN, NaN, NaN, NaN, NaN, NaN, NaN]

function panels(): ChartPanel[] {
  return [
    {
      title: 'Throughput',
      t: range(9),
      leftUnit: 'rps',
      rightUnit: 'servers',
      series: [
        {label: 'served', values: a},
        {label: 'in rotation', values: b, axis: 'right'},
      ],
      markers: [
        {t: 3, label: 'fault'},
        {t: 6, label: 'fix'},
      ],
    },
    {title: 'Latency', t: range(9), leftUnit: 'ms', series: [{label: 'p99', values: c}]},
  ]
}

describe('renderSvg', () => {
  it('is a well-formed standalone svg document', () => {
    const svg = renderSvg(panels(), {title: 'Run'})
    expect(svg.startsWith('<svg')).toBe(true)
    expect(svg.trimEnd().endsWith('</svg>')).toBe(true)
    expect(svg).toContain('xmlns="http://www.w3.org/2000/svg"')
    expect(svg).toMatch(/viewBox="0 0 \d+ \d+"/)
    expect(tagsBalanced(svg)).toBe(true)
  })

  it('draws one polyline per non-empty segment', () => {
    const svg = renderSvg(panels())
    expect(svg.match(/<polyline/g)?.length).toBe(runs(a) + runs(b) + runs(c))
    expect(runs(a) + runs(b) + runs(c)).toBe(4)
  })

  it('splits a polyline at NaN', () => {
    const p: ChartPanel = {title: 't', t: range(7), leftUnit: 'u', series: [{label: 's', values: [1, 2, 3, NaN, 4, 5, 6]}]}
    const lines = polylines(renderSvg([p]))
    expect(lines).toHaveLength(2)
    expect(lines[0].split(' ')).toHaveLength(3)
    expect(lines[1].split(' ')).toHaveLength(3)
  })

  it('escapes text for XML', () => {
    const p = panels()
    p[0].title = 'a<b & "c"'
    p[0].series[0].label = '<&>'
    p[0].markers = [{t: 1, label: "it's"}]
    const svg = renderSvg(p, {title: 'x<&y'})
    expect(svg).toContain('a&lt;b &amp; &quot;c&quot;')
    expect(svg).toContain('&lt;&amp;&gt;')
    expect(svg).toContain('x&lt;&amp;y')
    expect(svg).toContain('it&apos;s')
    expect(svg).not.toContain('<&')
    expect(tagsBalanced(svg)).toBe(true)
  })

  it('is deterministic and rounds numbers to one decimal', () => {
    const t = range(3600).map((i) => i * 0.37)
    const p: ChartPanel = {
      title: 'long',
      t,
      leftUnit: 'rps',
      series: [{label: 's', values: t.map((x) => Math.sin(x) * 333.333 + 400)}],
      markers: [{t: 123.456, label: 'fault'}],
    }
    const first = renderSvg([p])
    expect(renderSvg([p])).toBe(first)
    expect(first).not.toMatch(/\d\.\d{2,}/)
  })

  it('downsamples long series but keeps spikes', () => {
    const values = new Array(36000).fill(1)
    values[17777] = 1000
    const p: ChartPanel = {title: 'spike', t: range(values.length), leftUnit: 'rps', series: [{label: 's', values}]}
    const width = 600
    const [points] = polylines(renderSvg([p], {width}))
    const ys = points.split(' ').map((pt) => Number(pt.split(',')[1]))
    expect(ys.length).toBeLessThanOrEqual(2 * width)
    expect(Math.max(...ys) - Math.min(...ys)).toBeGreaterThan(100)
  })

  it('labels right-axis series on their own scale', () => {
    const svg = renderSvg(panels())
    expect(svg).toContain('>servers</text>')
    expect(svg).toMatch(/>90<\/text>|>100<\/text>/)
    expect(svg).toContain('in rotation (servers, right axis)')
    expect(svg).toContain('stroke-dasharray')
  })
})

describe('renderSvg with each value standing for many samples', () => {
  it('draws a pale band from the lowest to the highest sample, only for series that carry them', () => {
    const t = range(9)
    const plain = renderSvg([{title: 'p', t, series: [{label: 'a', values: b}], leftUnit: 'rps'}])
    const banded = renderSvg([{title: 'p', t, series: [{label: 'a', values: b, low: b.map((v) => v - 5), high: b.map((v) => v + 5)}], leftUnit: 'rps'}])
    expect(plain).not.toContain('<polygon')
    expect(banded.match(/<polygon [^>]*fill-opacity="0.2"/g)).toHaveLength(1)
    expect(tagsBalanced(banded)).toBe(true)
  })
})
