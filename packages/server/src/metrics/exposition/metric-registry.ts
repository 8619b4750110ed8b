import { Counter } from './counter.js'
import { EXPOSITION_CONTENT_TYPE } from './exposition-format.js'
import { Gauge } from './gauge.js'
import { Histogram } from './histogram.js'
import type { ExposedMetric, MetricOptions } from './metric.js'

/** A set of metrics printed together, in the order they were registered, for one scrape. */
export class MetricRegistry {
  readonly contentType = EXPOSITION_CONTENT_TYPE
  readonly #metrics = new Map<string, ExposedMetric>()

  /** Adds a metric made elsewhere (one may sit in several registries); names must be unique. */
  register<M extends ExposedMetric>(metric: M): M {
    if (this.#metrics.has(metric.name)) throw new Error(`metric ${metric.name} is registered twice`)
    this.#metrics.set(metric.name, metric)
    return metric
  }

  counter<L extends string = never>(options: MetricOptions<L, Counter<L>>): Counter<L> {
    return this.register(new Counter(options))
  }

  gauge<L extends string = never>(options: MetricOptions<L, Gauge<L>>): Gauge<L> {
    return this.register(new Gauge(options))
  }

  histogram<L extends string = never>(
    options: MetricOptions<L, Histogram<L>> & { buckets: readonly number[] },
  ): Histogram<L> {
    return this.register(new Histogram(options))
  }

  /** Runs every metric's scrape-time collection (at once, as they may wait), then prints them all. */
  async render(): Promise<string> {
    const metrics = [...this.#metrics.values()]
    await Promise.all(metrics.map((m) => m.collect()))
    return metrics.map((m) => m.exposition()).join('\n')
  }
}
