import { type LabelPair, sampleLine } from './exposition-format.js'
import { type LabelValues, Metric, type MetricOptions } from './metric.js'

/** Observations per bucket (not cumulative: each counted in the first bucket it fits), sum, count. */
interface HistogramState {
  readonly perBucket: number[]
  sum: number
  count: number
}

/** Observations counted into buckets by upper bound, printed cumulatively with `+Inf`, sum and count. */
export class Histogram<L extends string = never> extends Metric<L, HistogramState> {
  readonly type = 'histogram'
  readonly buckets: readonly number[]

  constructor(options: MetricOptions<L, Histogram<L>> & { buckets: readonly number[] }) {
    super(options)
    this.buckets = [...options.buckets].sort((a, b) => a - b)
  }

  /** Records `value` in the series of `labels`; without labels, `observe(value)`. */
  observe(labels: LabelValues<L> | number, value?: number): void {
    const [values, v] = typeof labels === 'number' ? [undefined, labels] : [labels, value ?? 0]
    const state = this.series(values)
    const bucket = this.buckets.findIndex((bound) => v <= bound)
    if (bucket >= 0) state.perBucket[bucket] = (state.perBucket[bucket] ?? 0) + 1
    state.sum += v
    state.count += 1
  }

  protected initial(): HistogramState {
    return { perBucket: this.buckets.map(() => 0), sum: 0, count: 0 }
  }

  protected lines(labels: readonly LabelPair[], state: HistogramState): string {
    let text = ''
    let cumulative = 0
    this.buckets.forEach((bound, i) => {
      cumulative += state.perBucket[i] ?? 0
      text += sampleLine(`${this.name}_bucket`, [...labels, ['le', String(bound)]], cumulative)
    })
    text += sampleLine(`${this.name}_bucket`, [...labels, ['le', '+Inf']], state.count)
    text += sampleLine(`${this.name}_sum`, labels, state.sum)
    return text + sampleLine(`${this.name}_count`, labels, state.count)
  }
}
