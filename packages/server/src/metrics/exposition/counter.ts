import { type LabelPair, sampleLine } from './exposition-format.js'
import { type LabelValues, Metric, type MetricOptions } from './metric.js'

/** A value that only goes up (or back to nothing with `reset`). */
export class Counter<L extends string = never> extends Metric<L, { value: number }> {
  readonly type = 'counter'

  constructor(options: MetricOptions<L, Counter<L>>) {
    super(options)
  }

  /** Adds `by` (default 1) to the series of `labels`; without labels, `inc(by)`. */
  inc(labels?: LabelValues<L> | number, by = 1): void {
    const [values, amount] = typeof labels === 'number' ? [undefined, labels] : [labels, by]
    if (amount < 0) throw new RangeError(`counter ${this.name} cannot decrease`)
    this.series(values).value += amount
  }

  protected initial(): { value: number } {
    return { value: 0 }
  }

  protected lines(labels: readonly LabelPair[], state: { value: number }): string {
    return sampleLine(this.name, labels, state.value)
  }
}
