/** Median and p95 of a sample, plus a helper that times a synchronous function in microseconds. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))
  return sorted[index] as number
}

export interface Summary {
  median: number
  p95: number
}

export function summarize(samples: readonly number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b)
  return { median: percentile(sorted, 50), p95: percentile(sorted, 95) }
}

/** Runs `fn` `iterations` times after a warm-up and returns per-call microseconds. */
export function timeMicros(
  fn: () => void,
  iterations: number,
  warmup = Math.min(200, iterations),
): Summary {
  for (let i = 0; i < warmup; i++) fn()
  const samples: number[] = []
  for (let i = 0; i < iterations; i++) {
    const start = process.hrtime.bigint()
    fn()
    samples.push(Number(process.hrtime.bigint() - start) / 1000)
  }
  return summarize(samples)
}

export function fmt(value: number, digits = 1): string {
  return Number.isFinite(value) ? value.toFixed(digits) : '-'
}

/** Prints a Markdown table under a title. */
export function printTable(title: string, header: string[], rows: string[][]): void {
  console.log(`${title}\n`)
  console.log(`| ${header.join(' | ')} |`)
  console.log(`|${header.map(() => '---').join('|')}|`)
  for (const r of rows) console.log(`| ${r.join(' | ')} |`)
  console.log('')
}
