import { PGlite } from '@electric-sql/pglite'
import { createPgliteUpstream } from './pglite-upstream.js'
import { PostgresPool } from './postgres-pool.js'
import type {
  UpstreamConfig,
  UpstreamEvent,
  UpstreamPoolState,
  UpstreamProvider,
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
      provider = this.#configOf(datasourceId).then(this.#factory)
      // A failed start must not stick: the next client tries again.
      provider.then(
        (p) => this.#started.set(datasourceId, p),
        () => this.#providers.delete(datasourceId),
      )
      this.#providers.set(datasourceId, provider)
    }
    return provider
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

  /** Closes every provider. */
  async close(): Promise<void> {
    const all = [...this.#providers.values()]
    this.#providers.clear()
    this.#started.clear()
    await Promise.allSettled(all.map(async (p) => (await p).close()))
  }
}
