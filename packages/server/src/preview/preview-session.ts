import {
  type AppliedPolicy,
  type CompiledSession,
  compileSession,
  describeCatalog,
  isPalisadeError,
  loadCore,
  type RewrittenStatement,
  rewrite,
  type VisibleSchema,
} from '@palisade/core'
import { isStoreError, type Store } from '@palisade/store'
import { ApiError } from '../http/api-error.js'
import type { TextRows } from '../upstream/upstream-reader.js'
import { openDatasourceReader, runReadOnly } from './preview-execution.js'

/** What `POST /preview` is asked (docs/preview-and-simulation.md). */
export interface PreviewRequest {
  userId?: string | undefined
  username?: string | undefined
  datasourceId?: string | undefined
  datasourceName?: string | undefined
  sql: string
  execute: boolean
  /** Rows kept per statement when executing. */
  limit: number
}

/** One schema of the visible catalog, in the API's spelling. */
export interface PreviewSchema {
  name: string
  tables: {
    name: string
    kind: string
    columns: readonly { name: string; type: string; masked: boolean }[]
    hidden_columns: readonly string[]
    row_filtered: boolean
    decided_per_query: boolean
    policies: readonly AppliedPolicy[]
  }[]
}

function catalogOf(schemas: readonly VisibleSchema[]): PreviewSchema[] {
  return schemas.map((schema) => ({
    name: schema.name,
    tables: schema.tables.map((t) => ({
      name: t.name,
      kind: t.kind,
      columns: t.columns,
      hidden_columns: t.hiddenColumns,
      row_filtered: t.rowFiltered,
      decided_per_query: t.decidedPerQuery,
      policies: t.policies,
    })),
  }))
}

/** An error as the user's client would see it, and what the audit would record. */
export interface PreviewError {
  sqlstate: string
  message: string
  detail: string | null
  hint: string | null
  /** The query audit's wording (it may name the policy; the client's never does). */
  audit_message: string | null
}

export interface PreviewStatement {
  original_sql: string
  rewritten_sql: string
  statement_type: string
  policies_applied: readonly AppliedPolicy[]
  /** With `execute`: the rows (at most `limit`), or null when the statement was not run. */
  result: (TextRows & { row_count: number; truncated: boolean }) | null
  /** With `execute`: the upstream's error, as the user would see it. */
  error: PreviewError | null
  /** Why an executed preview did not run this statement (only queries run). */
  not_executed: string | null
}

export interface PreviewResult {
  user: { id: string; username: string }
  datasource: { id: string; name: string }
  /** Whether the user's session would accept the whole input (it can still fail upstream). */
  allowed: boolean
  /** The refusal: the connection (no access) or the rewrite (a policy, a rule of docs/errors.md). */
  error: PreviewError | null
  statements: PreviewStatement[]
  /** Every relation the session can read, with visible, masked and filtered columns. */
  catalog: PreviewSchema[]
  /** Decision-function log lines written while the session compiled and the SQL was rewritten. */
  decision_logs: { function_name: string; level: string; message: string }[]
  executed: boolean
}

const DENIED_DETAIL =
  'The user is inactive, the datasource is inactive, or the user has no access to it.'

async function resolveUser(store: Store, request: PreviewRequest) {
  if (request.userId !== undefined) return store.users.get(request.userId)
  const user = await store.users.findByUsername(request.username ?? '')
  if (!user) throw new ApiError(404, 'not_found', 'user not found')
  return user
}

/** A datasource by id, else by name; 404 when there is none. */
export async function resolveDatasource(
  store: Store,
  request: Pick<PreviewRequest, 'datasourceId' | 'datasourceName'>,
) {
  if (request.datasourceId !== undefined) return store.datasources.get(request.datasourceId)
  const ds = await store.datasources.findByName(request.datasourceName ?? '')
  if (!ds) throw new ApiError(404, 'not_found', 'datasource not found')
  return ds
}

function previewError(error: unknown): PreviewError {
  if (isPalisadeError(error)) {
    return {
      sqlstate: error.code,
      message: error.message,
      detail: error.detail ?? null,
      hint: error.hint ?? null,
      audit_message: error.auditMessage,
    }
  }
  throw error
}

/**
 * What one user's session would do with `sql` on a datasource, without a client connection:
 * the same session build, compile and rewrite as the data plane, the rewritten SQL and the
 * policies applied per statement, the refusal if any, the visible catalog and, with `execute`,
 * the first rows of each query run upstream in a READ ONLY transaction.
 */
export async function previewSession(
  store: Store,
  request: PreviewRequest,
): Promise<PreviewResult> {
  const user = await resolveUser(store, request)
  const ds = await resolveDatasource(store, request)
  const result: PreviewResult = {
    user: { id: user.id, username: user.username },
    datasource: { id: ds.id, name: ds.name },
    allowed: false,
    error: null,
    statements: [],
    catalog: [],
    decision_logs: [],
    executed: false,
  }
  let session: CompiledSession
  try {
    const input = await store.sessions.rebuildSessionInput(user.id, ds.id)
    await loadCore()
    session = await compileSession(input, {
      onDecisionLog: (entry) =>
        result.decision_logs.push({
          function_name: entry.functionName,
          level: entry.level,
          message: entry.message,
        }),
    })
  } catch (error) {
    if (!isStoreError(error) || error.code !== 'not_found') throw error
    result.error = {
      sqlstate: '3D000',
      message: `database "${ds.name}" does not exist`,
      detail: DENIED_DETAIL,
      hint: null,
      audit_message: null,
    }
    return result
  }
  result.catalog = catalogOf(describeCatalog(session))
  let statements: readonly RewrittenStatement[]
  try {
    statements = rewrite(request.sql, session).statements
  } catch (error) {
    result.error = previewError(error)
    return result
  }
  result.allowed = true
  result.statements = statements.map((s) => ({
    original_sql: s.originalSql,
    rewritten_sql: s.sql,
    statement_type: s.statementType,
    policies_applied: s.policiesApplied,
    result: null,
    error: null,
    not_executed: null,
  }))
  if (request.execute && statements.length > 0) {
    const reader = await openDatasourceReader(store, ds.id)
    try {
      await runReadOnly(reader, session, statements, result.statements, request.limit)
    } finally {
      await reader.close()
    }
    result.executed = true
  }
  return result
}
