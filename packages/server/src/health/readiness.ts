import type { Store } from '@palisade/store'
import type { UpstreamStatus } from '../upstream/upstream.types.js'

/** What `GET /ready` answers and `/metrics` exposes (docs/operations.md#probes). */
export interface ReadinessReport {
  /** True when the store answers and the change feed is live: the instance can take clients. */
  readonly ready: boolean
  /** `ok`, or `unreachable` when a small read fails or takes longer than the timeout. */
  readonly store: 'ok' | 'unreachable'
  /** `live`, or `down` while this instance cannot hear other instances' changes. */
  readonly changeFeed: 'live' | 'down'
  /** Each datasource used since start and what was last seen of its upstream (not a condition). */
  readonly upstreams: readonly UpstreamStatus[]
  /** Why the instance is not ready, one sentence per failed condition (empty when ready). */
  readonly reasons: readonly string[]
}

/** Where the facts come from. */
export interface ReadinessSources {
  store: Store
  /** The data plane's view of its upstreams; absent for a bare admin app. */
  upstreams?: (() => readonly UpstreamStatus[]) | undefined
  /** A store read slower than this counts as unreachable (default 2 s). */
  storeTimeoutMs?: number | undefined
}

const DEFAULT_STORE_TIMEOUT_MS = 2000

/**
 * Checks readiness on demand. Callers that ask at the same time (the gauges of one scrape, two
 * probes) share one check, so the store sees one small read per moment, not one per caller.
 */
export class Readiness {
  readonly #sources: ReadinessSources
  #running: Promise<ReadinessReport> | undefined

  constructor(sources: ReadinessSources) {
    this.#sources = sources
  }

  check(): Promise<ReadinessReport> {
    this.#running ??= this.#check().finally(() => {
      this.#running = undefined
    })
    return this.#running
  }

  async #check(): Promise<ReadinessReport> {
    const { store } = this.#sources
    const storeUp = await answersWithin(
      () => store.users.list({ page_size: 1 }),
      this.#sources.storeTimeoutMs ?? DEFAULT_STORE_TIMEOUT_MS,
    )
    const feedLive = store.changes.live
    const reasons: string[] = []
    if (!storeUp) reasons.push('the store is unreachable')
    if (!feedLive) reasons.push('the change feed is down')
    return {
      ready: reasons.length === 0,
      store: storeUp ? 'ok' : 'unreachable',
      changeFeed: feedLive ? 'live' : 'down',
      upstreams: this.#sources.upstreams?.() ?? [],
      reasons,
    }
  }
}

/** Whether `read` resolves within `timeoutMs`; a rejection or a late answer is false. */
async function answersWithin(read: () => Promise<unknown>, timeoutMs: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), timeoutMs)
    timer.unref()
  })
  try {
    return await Promise.race([
      read().then(
        () => true as const,
        () => false as const,
      ),
      late,
    ])
  } finally {
    clearTimeout(timer)
  }
}
