import { describe, expect, it } from 'vitest'
import { escapeLabelValue, formatValue } from '../src/metrics/exposition/exposition-format.js'
import { MetricRegistry } from '../src/metrics/exposition/metric-registry.js'
import { processMetrics } from '../src/metrics/process-metrics.js'

/** The lines of one rendering, blank ones dropped. */
async function linesOf(registry: MetricRegistry): Promise<string[]> {
  return (await registry.render()).split('\n').filter((line) => line !== '')
}

describe('Prometheus text exposition', () => {
  it('escapes backslash, double quote and line feed in label values, and nothing else', () => {
    expect(escapeLabelValue('a"b\\c\nd')).toBe('a\\"b\\\\c\\nd')
    expect(escapeLabelValue("tab\there, 'quotes', {braces}=")).toBe(
      "tab\there, 'quotes', {braces}=",
    )
  })

  it('prints a labelled counter with its HELP and TYPE, one line per label set', async () => {
    const registry = new MetricRegistry()
    const counter = registry.counter({
      name: 'demo_total',
      help: 'A help text with a \\ and a\nline feed',
      labelNames: ['datasource', 'status'],
    })
    counter.inc({ datasource: 'shop', status: 'success' })
    counter.inc({ datasource: 'shop', status: 'success' }, 2)
    counter.inc({ datasource: 'we"ird\\name\n', status: 'error' })
    expect(await linesOf(registry)).toEqual([
      '# HELP demo_total A help text with a \\\\ and a\\nline feed',
      '# TYPE demo_total counter',
      'demo_total{datasource="shop",status="success"} 3',
      'demo_total{datasource="we\\"ird\\\\name\\n",status="error"} 1',
    ])
  })

  it('keeps apart label sets that share values, in the order they first appeared, until a reset', async () => {
    const registry = new MetricRegistry()
    const counter = registry.counter({
      name: 'pairs_total',
      help: 'Pairs.',
      labelNames: ['a', 'b', 'c'],
    })
    counter.inc({ a: 'x', b: 'y', c: 'z' })
    counter.inc({ a: 'x', b: 'z', c: 'y' })
    counter.inc({ a: 'xy', b: '', c: 'z' })
    counter.inc({ a: 'x', b: 'y', c: 'z' }, 4)
    counter.inc({ a: 1, b: 'y', c: 'z' })
    expect((await linesOf(registry)).slice(2)).toEqual([
      'pairs_total{a="x",b="y",c="z"} 5',
      'pairs_total{a="x",b="z",c="y"} 1',
      'pairs_total{a="xy",b="",c="z"} 1',
      'pairs_total{a="1",b="y",c="z"} 1',
    ])
    counter.reset()
    counter.inc({ a: 'x', b: 'z', c: 'y' })
    expect((await linesOf(registry)).slice(2)).toEqual(['pairs_total{a="x",b="z",c="y"} 1'])
  })

  it('prints an unlabelled metric as zero before its first change, and refuses to count down', async () => {
    const registry = new MetricRegistry()
    const counter = registry.counter({ name: 'untouched_total', help: 'never incremented' })
    registry.gauge({ name: 'untouched', help: 'never set' })
    expect(await linesOf(registry)).toContain('untouched_total 0')
    expect(await linesOf(registry)).toContain('untouched 0')
    expect(() => counter.inc(-1)).toThrow(RangeError)
  })

  it('prints histogram buckets cumulatively, then +Inf, sum and count per label set', async () => {
    const registry = new MetricRegistry()
    const histogram = registry.histogram({
      name: 'wait_seconds',
      help: 'waits',
      labelNames: ['pool'],
      buckets: [1, 0.1, 0.5],
    })
    for (const v of [0.05, 0.1, 0.3, 0.7, 42]) histogram.observe({ pool: 'a' }, v)
    expect(await linesOf(registry)).toEqual([
      '# HELP wait_seconds waits',
      '# TYPE wait_seconds histogram',
      'wait_seconds_bucket{pool="a",le="0.1"} 2',
      'wait_seconds_bucket{pool="a",le="0.5"} 3',
      'wait_seconds_bucket{pool="a",le="1"} 4',
      'wait_seconds_bucket{pool="a",le="+Inf"} 5',
      'wait_seconds_sum{pool="a"} 43.15',
      'wait_seconds_count{pool="a"} 5',
    ])
  })

  it('prints an unobserved unlabelled histogram with zero buckets', async () => {
    const registry = new MetricRegistry()
    registry.histogram({ name: 'idle_seconds', help: 'nothing yet', buckets: [1] })
    expect((await linesOf(registry)).slice(2)).toEqual([
      'idle_seconds_bucket{le="1"} 0',
      'idle_seconds_bucket{le="+Inf"} 0',
      'idle_seconds_sum 0',
      'idle_seconds_count 0',
    ])
  })

  it('spells non-finite values as the format does', () => {
    expect(
      [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, 1.5e-7].map(formatValue),
    ).toEqual(['NaN', '+Inf', '-Inf', '1.5e-7'])
  })

  it('reads scrape-time values in every collect before printing, and separates families by a blank line', async () => {
    const registry = new MetricRegistry()
    let pools = [{ name: 'a', waiting: 2 }]
    registry.gauge({
      name: 'waiting',
      help: 'clients waiting',
      labelNames: ['pool'],
      collect(gauge) {
        gauge.reset()
        for (const p of pools) gauge.set({ pool: p.name }, p.waiting)
      },
    })
    registry.gauge({
      name: 'later',
      help: 'read asynchronously',
      collect: async (gauge) => gauge.set(await Promise.resolve(7)),
    })
    expect(await registry.render()).toBe(
      '# HELP waiting clients waiting\n# TYPE waiting gauge\nwaiting{pool="a"} 2\n\n' +
        '# HELP later read asynchronously\n# TYPE later gauge\nlater 7\n',
    )
    pools = []
    expect(await linesOf(registry)).not.toContain('waiting{pool="a"} 2')
  })

  it('refuses two metrics of one name in one registry', () => {
    const registry = new MetricRegistry()
    registry.counter({ name: 'twice_total', help: 'x' })
    expect(() => registry.gauge({ name: 'twice_total', help: 'y' })).toThrow(/twice/)
  })

  it('shares the process metrics between registries, each printing them', async () => {
    const [one, two] = [new MetricRegistry(), new MetricRegistry()]
    for (const registry of [one, two]) {
      for (const metric of processMetrics('test_')) registry.register(metric)
    }
    const text = await two.render()
    expect(text).toMatch(/^test_process_resident_memory_bytes [1-9]\d*$/m)
    expect(text).toMatch(/^test_nodejs_heap_space_size_used_bytes\{space="old"\} \d+$/m)
    expect(text).toMatch(
      /^test_nodejs_version_info\{version="v[\d.]+",major="\d+",minor="\d+",patch="\d+"\} 1$/m,
    )
    expect(text).toContain('# TYPE test_nodejs_gc_duration_seconds histogram')
  })
})
