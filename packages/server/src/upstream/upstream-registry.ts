import { PGlite } from '@electric-sql/pglite'
import { createPgliteUpstream } from './pglite-upstream.js'
import { PostgresPool } from './postgres-pool.js'
import type {
  UpstreamConfig,
  UpstreamEvent,
  UpstreamPoolState,
  UpstreamProvider,
  UpstreamStatus,
} from './upstream.types.js'

/** Makes the provider of one datasource; replaceable (tests hand in a shared PGlite). */
export type UpstreamFactory = (config: UpstreamConfig) => Promise<UpstreamProvider>

/** The default factory: a warm PostgreSQL pool, or an embedded PGlite owned by the provider. */
export const defaultUpstreamFactory: UpstreamFactory = (config) => createUpstream(config)

/** The default factory, telling `onEvent` when a PostgreSQL upstream goes away and comes back. */
export function upstreamFactoryWithEvents(
  onEvent: ((event: UpstreamEvent) => void) | undefined,
): UpstreamFactory {
  return (config) => createUpstream(config, onEvent)
}

async function createUpstream(
  config: UpstreamConfig,
  onEvent?: (event: UpstreamEvent) => void,
): Promise<UpstreamProvider> {
  if (config.kind === 'postgres') {
    const pool = new PostgresPool(config, onEvent)
    await pool.warm()
    return pool
  }
  // An embedded upstream serves demos and tests: a 16 MB buffer cache instead of PGlite's 128 MB
  // (touched at start-up) keeps the proxy process about 100 MB smaller.
  const db = await PGlite.create(config.dataDir ?? undefined, {
    postgresqlconf: ['shared_buffers=16MB'],
  })
  if (config.initSql) await db.exec(config.initSql)
  return createPgliteUpstream({ db, owned: true, statementTimeoutMs: config.statementTimeoutMs })
}

/**
 * One upstream provider per datasource, created on first use. Settings changes reach new
 * providers only (docs/operations.md#configuration), which start at the next restart.
 */
export class UpstreamRegistry {
  readonly #providers = new Map<string, Promise<UpstreamProvider>>()
  /** The providers that have started, for metrics read synchronously. */
  readonly #started = new Map<string, UpstreamProvider>()
  /** Each datasource's name, once its config was read (by id). */
  readonly #names = new Map<string, string>()
  /** Datasources whose provider failed to start last time (by id). */
  readonly #failed = new Set<string>()
  readonly #configOf: (datasourceId: string) => Promise<UpstreamConfig>
  readonly #factory: UpstreamFactory

  constructor(
    configOf: (datasourceId: string) => Promise<UpstreamConfig>,
    factory: UpstreamFactory,
  ) {
    this.#configOf = configOf
    this.#factory = factory
  }

  /** The provider of a datasource. */
  get(datasourceId: string): Promise<UpstreamProvider> {
    let provider = this.#providers.get(datasourceId)
    if (!provider) {
      let configRead = false
      provider = this.#configOf(datasourceId).then((config) => {
        configRead = true
        this.#names.set(datasourceId, config.datasourceName)
        return this.#factory(config)
      })
      // A failed start must not stick: the next client tries again.
      provider.then(
        (p) => {
          this.#started.set(datasourceId, p)
          this.#failed.delete(datasourceId)
        },
        () => {
          this.#providers.delete(datasourceId)
          if (configRead) this.#failed.add(datasourceId)
        },
      )
      this.#providers.set(datasourceId, provider)
    }
    return provider
  }

  /**
   * Starts a PostgreSQL datasource's pool ahead of its first client (an embedded upstream opens
   * its files, so it is left to first use); nothing when it has started or is starting.
   */
  async warm(datasourceId: string): Promise<void> {
    if (this.#providers.has(datasourceId)) return
    const config = await this.#configOf(datasourceId)
    if (config.kind === 'postgres') await this.get(datasourceId)
  }

  /** The state of every PostgreSQL pool now. */
  poolStates(): UpstreamPoolState[] {
    const states: UpstreamPoolState[] = []
    for (const provider of this.#started.values()) {
      const state = provider.poolState?.()
      if (state) states.push(state)
    }
    return states
  }

  /** What was last seen of each datasource's upstream, by name (`UpstreamStatus`). */
  statuses(): UpstreamStatus[] {
    const statuses: UpstreamStatus[] = []
    for (const [id, datasource] of this.#names) {
      const provider = this.#started.get(id)
      if (provider) {
        const up = provider.reachable?.() ?? true
        statuses.push({ datasource, state: up ? 'reachable' : 'unreachable' })
      } else if (this.#failed.has(id)) statuses.push({ datasource, state: 'unreachable' })
    }
    return statuses.sort((a, b) => a.datasource.localeCompare(b.datasource))
  }

  /** Closes every provider. */
  async close(): Promise<void> {
    const all = [...this.#providers.values()]
    this.#providers.clear()
    this.#started.clear()
    this.#names.clear()
    this.#failed.clear()
    await Promise.allSettled(all.map(async (p) => (await p).close()))
  }
}
