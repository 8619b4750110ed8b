import { familyHeader, type LabelPair } from './exposition-format.js'

/** The values of a metric's labels, by label name. */
export type LabelValues<L extends string> = Readonly<Record<L, string | number>>

/** What every metric is made from. */
export interface MetricOptions<L extends string, M> {
  name: string
  help: string
  labelNames?: readonly L[]
  /** Runs at each scrape before the samples are printed, for values read from elsewhere. */
  collect?(metric: M): void | Promise<void>
}

/** What a registry needs of a metric, whatever its type. */
export interface ExposedMetric {
  readonly name: string
  collect(): Promise<void>
  exposition(): string
}

/**
 * One metric family: its series (one per distinct set of label values) and their state. A metric
 * without labels always has its one series, so it is printed (as zero) before its first change.
 */
export abstract class Metric<L extends string, S> implements ExposedMetric {
  readonly name: string
  readonly help: string
  readonly labelNames: readonly L[]
  abstract readonly type: 'counter' | 'gauge' | 'histogram'
  readonly #collect: ((metric: Metric<L, S>) => void | Promise<void>) | undefined
  /** Every series, in the order they appeared (the exposition's order). */
  readonly #series: { labels: readonly LabelPair[]; state: S }[] = []
  /**
   * The series by label values, one map level per label: a statement's counters find theirs
   * without building a key (the data plane updates three per statement).
   */
  #index = new Map<string, unknown>()

  constructor(options: MetricOptions<L, Metric<L, S>>) {
    this.name = options.name
    this.help = options.help
    this.labelNames = options.labelNames ?? []
    this.#collect = options.collect?.bind(options)
  }

  /** Forgets every series (values read at scrape time start from nothing each time). */
  reset(): void {
    this.#series.length = 0
    this.#index = new Map()
  }

  async collect(): Promise<void> {
    await this.#collect?.(this)
  }

  exposition(): string {
    if (this.labelNames.length === 0) this.series(undefined)
    let text = familyHeader(this.name, this.help, this.type)
    for (const { labels, state } of this.#series) text += this.lines(labels, state)
    return text
  }

  /** The state of the series with these label values, created on first use. */
  protected series(values: LabelValues<L> | undefined): S {
    const names = this.labelNames
    let level = this.#index
    for (let i = 0; i < names.length - 1; i++) {
      const value = String(values?.[names[i] as L] ?? '')
      let next = level.get(value) as Map<string, unknown> | undefined
      if (!next) {
        next = new Map()
        level.set(value, next)
      }
      level = next
    }
    const leaf = names.length === 0 ? '' : String(values?.[names[names.length - 1] as L] ?? '')
    let found = level.get(leaf) as { labels: readonly LabelPair[]; state: S } | undefined
    if (!found) {
      const labels = names.map((n): LabelPair => [n, String(values?.[n] ?? '')])
      found = { labels, state: this.initial() }
      level.set(leaf, found)
      this.#series.push(found)
    }
    return found.state
  }

  /** A new series' state. */
  protected abstract initial(): S

  /** The sample lines of one series. */
  protected abstract lines(labels: readonly LabelPair[], state: S): string
}
