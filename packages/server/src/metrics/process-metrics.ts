import { readdir, readFile } from 'node:fs/promises'
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks'
import { getHeapSpaceStatistics } from 'node:v8'
import { Counter } from './exposition/counter.js'
import { Gauge } from './exposition/gauge.js'
import { Histogram } from './exposition/histogram.js'
import type { ExposedMetric } from './exposition/metric.js'

const shared = new Map<string, readonly ExposedMetric[]>()

/**
 * The Node.js process's own metrics under `prefix`: CPU, memory, heap, event loop, handles and
 * garbage collection, named as Prometheus client libraries name them so that stock dashboards
 * work. They describe the process rather than one server, so every registry in the process gets
 * the same set, with one event-loop monitor and one GC observer between them.
 */
export function processMetrics(prefix: string): readonly ExposedMetric[] {
  let metrics = shared.get(prefix)
  if (!metrics) {
    metrics = [
      ...cpuAndMemory(prefix),
      ...eventLoop(prefix),
      ...activity(prefix),
      ...heap(prefix),
      garbageCollection(prefix),
    ]
    shared.set(prefix, metrics)
  }
  return metrics
}

function cpuAndMemory(prefix: string): ExposedMetric[] {
  const cpu = (name: string, help: string, read: (usage: NodeJS.CpuUsage) => number) =>
    new Counter({
      name: `${prefix}process_cpu_${name}`,
      help,
      collect(counter) {
        counter.reset()
        counter.inc(read(process.cpuUsage()) / 1e6)
      },
    })
  const started = new Gauge({
    name: `${prefix}process_start_time_seconds`,
    help: 'Start time of the process since unix epoch in seconds.',
  })
  started.set(Math.round(Date.now() / 1000 - process.uptime()))
  const metrics: ExposedMetric[] = [
    cpu('user_seconds_total', 'Total user CPU time spent in seconds.', (u) => u.user),
    cpu('system_seconds_total', 'Total system CPU time spent in seconds.', (u) => u.system),
    cpu(
      'seconds_total',
      'Total user and system CPU time spent in seconds.',
      (u) => u.user + u.system,
    ),
    started,
    new Gauge({
      name: `${prefix}process_resident_memory_bytes`,
      help: 'Resident memory size in bytes.',
      collect: (gauge) => gauge.set(process.memoryUsage.rss()),
    }),
  ]
  // Linux tells the rest through /proc; other systems go without, as with other clients.
  if (process.platform !== 'linux') return metrics
  const status = (field: string) => async (gauge: Gauge) => {
    const text = await readFile('/proc/self/status', 'utf8').catch(() => '')
    const kib = new RegExp(`^${field}:\\s*(\\d+) kB`, 'm').exec(text)?.[1]
    if (kib) gauge.set(Number(kib) * 1024)
  }
  return [
    ...metrics,
    new Gauge({
      name: `${prefix}process_virtual_memory_bytes`,
      help: 'Virtual memory size in bytes.',
      collect: status('VmSize'),
    }),
    new Gauge({
      name: `${prefix}process_heap_bytes`,
      help: 'Process heap size in bytes.',
      collect: status('VmData'),
    }),
    new Gauge({
      name: `${prefix}process_open_fds`,
      help: 'Number of open file descriptors.',
      // Less the one that reading the folder opens.
      collect: async (gauge) => gauge.set((await readdir('/proc/self/fd')).length - 1),
    }),
    new Gauge({
      name: `${prefix}process_max_fds`,
      help: 'Maximum number of open file descriptors.',
      async collect(gauge) {
        const limits = await readFile('/proc/self/limits', 'utf8').catch(() => '')
        const soft = /^Max open files\s+(\d+)/m.exec(limits)?.[1]
        if (soft) gauge.set(Number(soft))
      },
    }),
  ]
}

function eventLoop(prefix: string): ExposedMetric[] {
  const delays = monitorEventLoopDelay({ resolution: 10 })
  delays.enable()
  const lag = (name: string, help: string) =>
    new Gauge({ name: `${prefix}nodejs_eventloop_lag_${name}seconds`, help })
  const min = lag('min_', 'The minimum recorded event loop delay.')
  const max = lag('max_', 'The maximum recorded event loop delay.')
  const mean = lag('mean_', 'The mean of the recorded event loop delays.')
  const stddev = lag('stddev_', 'The standard deviation of the recorded event loop delays.')
  const p50 = lag('p50_', 'The 50th percentile of the recorded event loop delays.')
  const p90 = lag('p90_', 'The 90th percentile of the recorded event loop delays.')
  const p99 = lag('p99_', 'The 99th percentile of the recorded event loop delays.')
  const now = new Gauge({
    name: `${prefix}nodejs_eventloop_lag_seconds`,
    help: 'Lag of event loop in seconds.',
    async collect(gauge) {
      const start = process.hrtime.bigint()
      await new Promise<void>((resolve) => setImmediate(resolve))
      gauge.set(Number(process.hrtime.bigint() - start) / 1e9)
      // The monitor's figures cover the time since the previous scrape; all read at once.
      min.set(delays.min / 1e9)
      max.set(delays.max / 1e9)
      mean.set(delays.mean / 1e9)
      stddev.set(delays.stddev / 1e9)
      p50.set(delays.percentile(50) / 1e9)
      p90.set(delays.percentile(90) / 1e9)
      p99.set(delays.percentile(99) / 1e9)
      delays.reset()
    },
  })
  return [now, min, max, mean, stddev, p50, p90, p99]
}

/** What keeps the event loop alive, by type, and the totals. */
function activity(prefix: string): ExposedMetric[] {
  // Node lists handles and requests only through these undocumented calls; absent, they stay empty.
  const node = process as unknown as {
    _getActiveHandles?: () => object[]
    _getActiveRequests?: () => object[]
  }
  const grouped = (
    name: string,
    help: string,
    types: () => readonly string[],
  ): [Gauge<'type'>, Gauge] => {
    const total = new Gauge({
      name: `${prefix}nodejs_${name}_total`,
      help: `Total number of ${name.replace('_', ' ')}.`,
    })
    const byType = new Gauge<'type'>({
      name: `${prefix}nodejs_${name}`,
      help,
      labelNames: ['type'],
      collect(gauge) {
        gauge.reset()
        const counts = new Map<string, number>()
        const all = types()
        for (const type of all) counts.set(type, (counts.get(type) ?? 0) + 1)
        for (const [type, n] of counts) gauge.set({ type }, n)
        total.set(all.length)
      },
    })
    return [byType, total]
  }
  const names = (list: object[] | undefined) => (list ?? []).map((o) => o.constructor.name)
  return [
    ...grouped(
      'active_resources',
      'Number of active resources that are currently keeping the event loop alive, grouped by async resource type.',
      () => process.getActiveResourcesInfo(),
    ),
    ...grouped(
      'active_handles',
      'Number of active libuv handles grouped by handle type. Every handle type is C++ class name.',
      () => names(node._getActiveHandles?.()),
    ),
    ...grouped(
      'active_requests',
      'Number of active libuv requests grouped by request type. Every request type is C++ class name.',
      () => names(node._getActiveRequests?.()),
    ),
  ]
}

function heap(prefix: string): ExposedMetric[] {
  const memory = (name: string, help: string, read: (m: NodeJS.MemoryUsage) => number) =>
    new Gauge({
      name: `${prefix}nodejs_${name}`,
      help,
      collect: (gauge) => gauge.set(read(process.memoryUsage())),
    })
  const space = (name: string, help: string, read: (s: SpaceStatistics) => number) =>
    new Gauge<'space'>({
      name: `${prefix}nodejs_heap_space_size_${name}_bytes`,
      help,
      labelNames: ['space'],
      collect(gauge) {
        for (const s of getHeapSpaceStatistics()) {
          gauge.set({ space: s.space_name.replace(/_space$/, '') }, read(s))
        }
      },
    })
  const [major, minor, patch] = process.versions.node.split('.')
  const version = new Gauge<'version' | 'major' | 'minor' | 'patch'>({
    name: `${prefix}nodejs_version_info`,
    help: 'Node.js version info.',
    labelNames: ['version', 'major', 'minor', 'patch'],
  })
  version.set(
    { version: process.version, major: major ?? '', minor: minor ?? '', patch: patch ?? '' },
    1,
  )
  return [
    memory('heap_size_total_bytes', 'Process heap size from Node.js in bytes.', (m) => m.heapTotal),
    memory(
      'heap_size_used_bytes',
      'Process heap size used from Node.js in bytes.',
      (m) => m.heapUsed,
    ),
    memory('external_memory_bytes', 'Node.js external memory size in bytes.', (m) => m.external),
    space('total', 'Process heap space size total from Node.js in bytes.', (s) => s.space_size),
    space('used', 'Process heap space size used from Node.js in bytes.', (s) => s.space_used_size),
    space(
      'available',
      'Process heap space size available from Node.js in bytes.',
      (s) => s.space_available_size,
    ),
    version,
  ]
}

type SpaceStatistics = ReturnType<typeof getHeapSpaceStatistics>[number]

const GC_KINDS: Readonly<Record<number, string>> = {
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
}

function garbageCollection(prefix: string): ExposedMetric {
  const durations = new Histogram<'kind'>({
    name: `${prefix}nodejs_gc_duration_seconds`,
    help: 'Garbage collection duration by kind, one of major, minor, incremental or weakcb.',
    labelNames: ['kind'],
    buckets: [0.001, 0.01, 0.1, 1, 2, 5],
  })
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const kind = (entry as { detail?: { kind?: number } }).detail?.kind
      const name = kind === undefined ? undefined : GC_KINDS[kind]
      if (name) durations.observe({ kind: name }, entry.duration / 1000)
    }
  }).observe({ entryTypes: ['gc'] })
  return durations
}
