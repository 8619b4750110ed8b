import { type LabelPair, sampleLine } from './exposition-format.js'
import { type LabelValues, Metric, type MetricOptions } from './metric.js'

/** A value that is set to what something is now. */
export class Gauge<L extends string = never> extends Metric<L, { value: number }> {
  readonly type = 'gauge'

  constructor(options: MetricOptions<L, Gauge<L>>) {
    super(options)
  }

  /** Sets the series of `labels` to `value`; without labels, `set(value)`. */
  set(labels: LabelValues<L> | number, value?: number): void {
    const [values, to] = typeof labels === 'number' ? [undefined, labels] : [labels, value ?? 0]
    this.series(values).value = to
  }

  protected initial(): { value: number } {
    return { value: 0 }
  }

  protected lines(labels: readonly LabelPair[], state: { value: number }): string {
    return sampleLine(this.name, labels, state.value)
  }
}
