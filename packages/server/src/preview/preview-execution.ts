import {
  type CompiledSession,
  type RewrittenStatement,
  StatementKind,
  scrubUpstreamError,
} from '@palisade/core'
import type { Store } from '@palisade/store'
import { ApiError } from '../http/api-error.js'
import {
  openUpstreamReader,
  type TextRows,
  type UpstreamReader,
} from '../upstream/upstream-reader.js'
import type { PreviewStatement } from './preview-session.js'

/** The cursor a preview reads through, so only `limit + 1` rows ever leave the upstream. */
const CURSOR = 'palisade_preview'

/**
 * One read connection to a datasource's upstream for previews and simulations: its statement
 * timeout (30 s when it has none); 503 `upstream_unavailable` when it cannot be reached.
 */
export async function openDatasourceReader(
  store: Store,
  datasourceId: string,
): Promise<UpstreamReader> {
  const connection = await store.datasources.getConnection(datasourceId)
  return openUpstreamReader(connection, {
    connectMs: 30_000,
    statementMs: connection.statement_timeout_ms || 30_000,
  }).catch((error: unknown) => {
    const reason = error instanceof Error ? error.message : String(error)
    throw new ApiError(503, 'upstream_unavailable', `cannot reach the datasource: ${reason}`)
  })
}

/**
 * Runs a query through a cursor inside the caller's transaction and returns at most `limit`
 * rows, and whether there were more: only `limit + 1` rows ever leave the upstream.
 */
export async function fetchThroughCursor(
  reader: UpstreamReader,
  sql: string,
  limit: number,
): Promise<TextRows & { truncated: boolean }> {
  await reader.query(`DECLARE ${CURSOR} NO SCROLL CURSOR FOR ${sql}`)
  const fetched = await reader.textRows(`FETCH FORWARD ${limit + 1} FROM ${CURSOR}`)
  await reader.query(`CLOSE ${CURSOR}`)
  const truncated = fetched.rows.length > limit
  return { ...fetched, rows: truncated ? fetched.rows.slice(0, limit) : fetched.rows, truncated }
}

/** The fields of a driver error (node-postgres and PGlite both carry them). */
export function upstreamFields(error: unknown) {
  const e = error as { code?: unknown; message?: unknown; detail?: unknown; hint?: unknown }
  const str = (value: unknown) => (typeof value === 'string' ? value : undefined)
  return {
    code: str(e.code) ?? 'XX000',
    message: str(e.message) ?? String(error),
    detail: str(e.detail),
    hint: str(e.hint),
  }
}

/**
 * Runs each query of a preview upstream in one READ ONLY transaction that is always rolled
 * back, keeping the first `limit` rows of each; a failed statement gets the error its user
 * would see (scrubbed as the data plane scrubs it) and the rest run after a savepoint rollback.
 */
export async function runReadOnly(
  reader: UpstreamReader,
  session: CompiledSession,
  statements: readonly RewrittenStatement[],
  out: PreviewStatement[],
  limit: number,
): Promise<void> {
  await reader.query('BEGIN READ ONLY')
  try {
    for (const [i, statement] of statements.entries()) {
      const target = out[i] as PreviewStatement
      // An EXPLAIN shows the admin the full plan, policy internals included (the data plane
      // shows its user a redacted one).
      const plan = statement.kind === StatementKind.Explain ? statement.explain?.fullSql : undefined
      if (statement.kind !== StatementKind.Select && plan === undefined) {
        target.not_executed = 'only queries run in a preview'
        continue
      }
      await reader.query('SAVEPOINT palisade_preview_statement')
      try {
        const fetched = plan
          ? { ...(await reader.textRows(plan)), truncated: false }
          : await fetchThroughCursor(reader, statement.sql, limit)
        target.result = { ...fetched, row_count: fetched.rows.length }
        await reader.query('RELEASE SAVEPOINT palisade_preview_statement')
      } catch (error) {
        const scrubbed = scrubUpstreamError(upstreamFields(error), {
          session,
          originalSql: statement.originalSql,
        })
        target.error = {
          sqlstate: scrubbed.code,
          message: scrubbed.message,
          detail: scrubbed.detail ?? null,
          hint: scrubbed.hint ?? null,
          audit_message: null,
        }
        await reader.query('ROLLBACK TO SAVEPOINT palisade_preview_statement')
      }
    }
  } finally {
    await reader.query('ROLLBACK').catch(() => undefined)
  }
}
