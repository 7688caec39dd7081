/** When a scenario's faults hold, in scenario seconds: from the first start to the last end. */
export interface FaultWindow {
  from: number
  to: number
}

export function faultWindow(faults: ReadonlyArray<FaultWindow>): FaultWindow | null {
  if (faults.length === 0) return null
  let from = Infinity
  let to = -Infinity
  for (const f of faults) {
    if (f.from < from) from = f.from
    if (f.to > to) to = f.to
  }
  return {from, to}
}
