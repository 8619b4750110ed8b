let insideWorker = false

/** @internal Called once by the decision worker's entry: work here runs in place. */
export function markDecisionWorkerThread(): void {
  insideWorker = true
}

/** @internal Whether this thread is the decision worker. */
export function isDecisionWorkerThread(): boolean {
  return insideWorker
}
