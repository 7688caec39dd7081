// A journal a store reads begins with a run-start entry; tests that write one by hand need its fields (only the run id matters).
export function runStartFields(runId: string) {
  return {runId, runbookName: 'x', runbookSha256: 'abc', runbookFile: '/tmp/x.yaml', operator: 'alice', host: 'h', pid: 1, resources: []}
}
