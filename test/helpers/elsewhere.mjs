// Loaded with `node --import` into a spawned sluice: it runs as if on another host
// (SLUICE_TEST_HOSTNAME) with a clock SLUICE_TEST_SKEW_SECONDS off, so tests can show that
// liveness never compares another machine's timestamps and never trusts a pid it cannot see.
import os from 'node:os'
import {syncBuiltinESMExports} from 'node:module'

const skew = Number(process.env.SLUICE_TEST_SKEW_SECONDS ?? 0) * 1000
const RealDate = Date
class SkewedDate extends RealDate {
  constructor(...args) {
    if (args.length === 0) super(RealDate.now() + skew)
    else super(...args)
  }
  static now() {
    return RealDate.now() + skew
  }
}
globalThis.Date = SkewedDate
const host = process.env.SLUICE_TEST_HOSTNAME
if (host) {
  os.hostname = () => host
  syncBuiltinESMExports()
}
