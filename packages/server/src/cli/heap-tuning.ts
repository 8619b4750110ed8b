import { setFlagsFromString } from 'node:v8'

/**
 * How much V8 lets the old generation grow past what a full collection left, in percent. V8's
 * default is dynamic, up to 4×: after one large burst (saving or reading a 10,000-table catalog)
 * the serving process kept 130 MB of heap for 57 MB of live objects, and V8 hands little of it
 * back. 20% keeps the heap near its live size at no measured cost in throughput (bench/README,
 * "bench/wide-login"); the data plane's garbage is young and dies in scavenges, which this does
 * not change.
 */
export const HEAP_GROWING_PERCENT = 20

/**
 * Sets the old generation's growth for this process (the worker threads share it) unless the
 * operator chose one (`node --heap-growing-percent=N`, or in NODE_OPTIONS). True when set here.
 */
export function tuneHeapGrowth(
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string = process.env['NODE_OPTIONS'] ?? '',
): boolean {
  const chosen = [...execArgv, ...nodeOptions.split(/\s+/)].some((arg) =>
    /^--heap[-_]growing[-_]percent\b/.test(arg),
  )
  if (chosen) return false
  setFlagsFromString(`--heap-growing-percent=${HEAP_GROWING_PERCENT}`)
  return true
}
