import {spawnSync} from 'node:child_process'
import {mkdtempSync, readFileSync, writeFileSync} from 'node:fs'
import {tmpdir} from 'node:os'
import {join} from 'node:path'
import {inflateSync} from 'node:zlib'

// An SVG as a person sees it printed in greyscale: rendered by librsvg's rsvg-convert (Debian's
// librsvg2-bin), then each pixel's luma (Rec. 709 weights on the sRGB values, as ImageMagick's
// `-colorspace Gray` and most greyscale printing take it), 0 black to 1 white.

export interface GreyImage {
  width: number
  height: number
  /** Luma of pixel (x, y), 0..1; outside the image, white. */
  at(x: number, y: number): number
}

/** Whether rsvg-convert is installed; .ci/run installs it. */
export function hasRsvgConvert(): boolean {
  return !spawnSync('rsvg-convert', ['--version']).error
}

export function renderGrey(svg: string): GreyImage {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-grey-'))
  const input = join(dir, 'chart.svg')
  const output = join(dir, 'chart.png')
  writeFileSync(input, svg)
  const r = spawnSync('rsvg-convert', ['--background-color', 'white', '-o', output, input])
  if (r.status !== 0) throw new Error(`rsvg-convert failed: ${r.stderr.toString()}`)
  return decodePng(readFileSync(output))
}

/** An 8-bit, non-interlaced RGB or RGBA PNG (what rsvg-convert writes), as luma over white. */
export function decodePng(png: Buffer): GreyImage {
  if (png.readUInt32BE(0) !== 0x89504e47) throw new Error('not a PNG')
  let at = 8
  let width = 0
  let height = 0
  let channels = 0
  const idat: Buffer[] = []
  while (at < png.length) {
    const length = png.readUInt32BE(at)
    const type = png.toString('latin1', at + 4, at + 8)
    const data = png.subarray(at + 8, at + 8 + length)
    if (type === 'IHDR') {
      width = data.readUInt32BE(0)
      height = data.readUInt32BE(4)
      const depth = data[8]
      const colour = data[9]
      if (depth !== 8 || data[12] !== 0 || (colour !== 2 && colour !== 6))
        throw new Error(`unsupported PNG: depth ${depth}, colour ${colour}, interlace ${data[12]}`)
      channels = colour === 6 ? 4 : 3
    } else if (type === 'IDAT') idat.push(data)
    at += 12 + length
  }
  const raw = inflateSync(Buffer.concat(idat))
  const stride = width * channels
  const pixels = new Uint8Array(height * stride)
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)]
    const row = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1))
    for (let i = 0; i < stride; i++) {
      const a = i >= channels ? pixels[y * stride + i - channels] : 0
      const b = y > 0 ? pixels[(y - 1) * stride + i] : 0
      const c = i >= channels && y > 0 ? pixels[(y - 1) * stride + i - channels] : 0
      const p = a + b - c
      const pa = Math.abs(p - a)
      const pb = Math.abs(p - b)
      const pc = Math.abs(p - c)
      const paeth = pa <= pb && pa <= pc ? a : pb <= pc ? b : c
      const predicted = [0, a, b, (a + b) >> 1, paeth][filter]
      pixels[y * stride + i] = (row[i] + predicted) & 0xff
    }
  }
  return {
    width,
    height,
    at(x: number, y: number): number {
      if (x < 0 || y < 0 || x >= width || y >= height) return 1
      const i = Math.floor(y) * stride + Math.floor(x) * channels
      const alpha = channels === 4 ? pixels[i + 3] / 255 : 1
      const luma = (0.2126 * pixels[i] + 0.7152 * pixels[i + 1] + 0.0722 * pixels[i + 2]) / 255
      return luma * alpha + (1 - alpha)
    },
  }
}
