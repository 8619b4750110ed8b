import { createHash } from 'node:crypto'
import {
  type CompiledSession,
  compileSession,
  describeCatalog,
  isPalisadeError,
  loadCore,
  type RewrittenStatement,
  rewrite,
  type SessionInput,
  StatementKind,
  scrubUpstreamError,
  type VisibleSchema,
} from '@palisade/core'
import { isStoreError, type ScopedStore, type Store } from '@palisade/store'
import { ApiError, storeStepAt } from '../http/api-error.js'
import type { UpstreamReader } from '../upstream/upstream-reader.js'
import { fetchThroughCursor, openDatasourceReader, upstreamFields } from './preview-execution.js'

/** A proposed change: policies and assignments as the admin API takes them, not yet saved. */
export interface ProposedChange {
  create_policies?: (Record<string, unknown> & { ref?: string })[]
  update_policies?: (Record<string, unknown> & { id: string })[]
  delete_policies?: string[]
  assign?: (Record<string, unknown> & { policy_ref?: string })[]
  unassign?: string[]
}

export interface SimulationRequest {
  datasourceId: string
  changes: ProposedChange
  window: { userIds?: string[]; from?: string; to?: string; maxQueries: number }
  /** Run each query upstream (READ ONLY) to count rows; otherwise compare rewrites only. */
  execute: boolean
  /** Rows counted per query at most (the count says `capped` beyond). */
  maxRows: number
}

/** One side (current or proposed) of a replayed query. */
export interface SimulatedOutcome {
  allowed: boolean
  error: { sqlstate: string; message: string } | null
  rewritten_sql: string | null
  policies: string[]
  /** Rows the query returned (with `execute`), at most `max_rows`. */
  rows: number | null
  rows_capped: boolean
  /** SHA-256 of the rows counted, in a fixed order: equal counts can still be other rows. */
  rows_digest: string | null
  columns: string[] | null
  /** `table.column` this side cannot see, of the tables the statement reads. */
  hidden_columns: string[]
  /** `table.column` this side sees masked, of the tables the statement reads. */
  masked_columns: string[]
}

export interface SimulatedQuery {
  user: { id: string; username: string }
  original_sql: string
  /** How many audited runs of this statement by this user the window held. */
  occurrences: number
  last_run_at: string
  before: SimulatedOutcome
  after: SimulatedOutcome
  /** `unchanged`, `newly_refused`, `newly_allowed`, `changed` (rows, columns or masks). */
  change: 'unchanged' | 'newly_refused' | 'newly_allowed' | 'changed'
  rows_delta: number | null
  columns_removed: string[]
  columns_masked: string[]
  columns_unmasked: string[]
}

export interface SimulationResult {
  datasource: { id: string; name: string }
  summary: {
    queries: number
    users: number
    unchanged: number
    newly_refused: number
    newly_allowed: number
    changed: number
    fewer_rows: number
    more_rows: number
  }
  queries: SimulatedQuery[]
}

/** Applies the proposal inside the rolled-back transaction. */
async function applyProposal(
  scoped: ScopedStore,
  datasourceId: string,
  changes: ProposedChange,
  actorId: string,
): Promise<void> {
  const refs = new Map<string, string>()
  for (const [i, body] of (changes.create_policies ?? []).entries()) {
    const { ref, ...input } = body
    const created = await storeStepAt(`changes.create_policies[${i}]`, () =>
      scoped.policies.create(input as never, actorId),
    )
    if (ref !== undefined) refs.set(ref, created.id)
  }
  for (const [i, body] of (changes.update_policies ?? []).entries()) {
    const { id, ...input } = body
    await storeStepAt(`changes.update_policies[${i}]`, () =>
      scoped.policies.update(id, input as never, actorId),
    )
  }
  for (const [i, id] of (changes.delete_policies ?? []).entries()) {
    await storeStepAt(`changes.delete_policies[${i}]`, () => scoped.policies.delete(id, actorId))
  }
  for (const [i, id] of (changes.unassign ?? []).entries()) {
    await storeStepAt(`changes.unassign[${i}]`, () =>
      scoped.assignments.unassign(datasourceId, id, actorId),
    )
  }
  for (const [i, body] of (changes.assign ?? []).entries()) {
    const { policy_ref, ...input } = body
    if (policy_ref !== undefined) {
      const id = refs.get(policy_ref)
      if (!id) {
        throw new ApiError(422, 'validation_failed', 'request body is invalid', [
          {
            field: `changes.assign[${i}].policy_ref`,
            code: 'not_found',
            message: `no created policy has ref "${policy_ref}"`,
          },
        ])
      }
      input['policy_id'] = id
    }
    await storeStepAt(`changes.assign[${i}]`, () =>
      scoped.assignments.assign(datasourceId, input as never, actorId),
    )
  }
}

/** The distinct (user, statement) pairs of the window, newest first, with their counts. */
async function auditedQueries(store: Store, request: SimulationRequest) {
  const wanted = request.window.userIds ? new Set(request.window.userIds) : undefined
  const byKey = new Map<
    string,
    { userId: string; username: string; sql: string; occurrences: number; last: string }
  >()
  for (let page = 1; page <= 100 && byKey.size < request.window.maxQueries; page++) {
    const { data } = await store.audit.queries.list({
      datasource_id: request.datasourceId,
      ...(wanted?.size === 1 ? { user_id: [...wanted][0] } : {}),
      ...(request.window.from ? { from: request.window.from } : {}),
      ...(request.window.to ? { to: request.window.to } : {}),
      page,
      page_size: 200,
    })
    for (const row of data) {
      if (wanted && !wanted.has(row.user_id)) continue
      const key = `${row.user_id}\u0000${row.original_query}`
      const seen = byKey.get(key)
      if (seen) seen.occurrences++
      else if (byKey.size < request.window.maxQueries) {
        byKey.set(key, {
          userId: row.user_id,
          username: row.username,
          sql: row.original_query,
          occurrences: 1,
          last: row.created_at,
        })
      }
    }
    if (data.length < 200) break
  }
  return [...byKey.values()]
}

/** Session inputs per user; null where the user could not connect. */
async function inputsFor(
  sessions: ScopedStore['sessions'],
  datasourceId: string,
  userIds: readonly string[],
): Promise<Map<string, SessionInput | null>> {
  const out = new Map<string, SessionInput | null>()
  for (const id of userIds) {
    try {
      out.set(id, await sessions.rebuildSessionInput(id, datasourceId))
    } catch (error) {
      if (!isStoreError(error) || error.code !== 'not_found') throw error
      out.set(id, null)
    }
  }
  return out
}

/** A user's session on one side, with its visible catalog described once for all its queries. */
interface SimulatedSession {
  session: CompiledSession
  catalog: VisibleSchema[]
}

/** What the statement's tables look like to a session: hidden and masked `table.column`s. */
function columnView(catalog: readonly VisibleSchema[], statement: RewrittenStatement | undefined) {
  const hidden: string[] = []
  const masked: string[] = []
  const read = new Set((statement?.facts?.tables ?? []).map((t) => `${t.schema}.${t.table}`))
  for (const schema of catalog) {
    for (const table of schema.tables) {
      if (!read.has(`${schema.upstream}.${table.name}`)) continue
      for (const c of table.columns) if (c.masked) masked.push(`${table.name}.${c.name}`)
      for (const c of table.hiddenColumns) hidden.push(`${table.name}.${c}`)
    }
  }
  return { hidden: hidden.sort(), masked: masked.sort() }
}

const REFUSED_TO_CONNECT = { sqlstate: '3D000', message: 'the user cannot connect' }

/** One side of one query: rewrite under the session and, with `reader`, count its rows. */
async function outcome(
  side: SimulatedSession | null,
  sql: string,
  reader: UpstreamReader | undefined,
  maxRows: number,
): Promise<SimulatedOutcome> {
  const base: SimulatedOutcome = {
    allowed: false,
    error: null,
    rewritten_sql: null,
    policies: [],
    rows: null,
    rows_capped: false,
    rows_digest: null,
    columns: null,
    hidden_columns: [],
    masked_columns: [],
  }
  if (!side) return { ...base, error: REFUSED_TO_CONNECT }
  const { session } = side
  let statement: RewrittenStatement | undefined
  try {
    const statements = rewrite(sql, session).statements
    // The audit holds one row per statement, so a replayed text is one statement.
    statement = statements[0]
  } catch (error) {
    if (!isPalisadeError(error)) throw error
    return { ...base, error: { sqlstate: error.code, message: error.message } }
  }
  const view = columnView(side.catalog, statement)
  const out: SimulatedOutcome = {
    ...base,
    allowed: true,
    rewritten_sql: statement?.sql ?? null,
    policies: (statement?.policiesApplied ?? []).map((p) => p.name).sort(),
    hidden_columns: view.hidden,
    masked_columns: view.masked,
  }
  if (!reader || !statement || statement.kind !== StatementKind.Select) return out
  await reader.query('BEGIN READ ONLY')
  try {
    const fetched = await fetchThroughCursor(reader, statement.sql, maxRows)
    out.rows = fetched.rows.length
    out.rows_capped = fetched.truncated
    out.rows_digest = digestOf(fetched.rows)
    out.columns = fetched.columns.map((c) => c.name)
  } catch (error) {
    const scrubbed = scrubUpstreamError(upstreamFields(error), { session, originalSql: sql })
    out.error = { sqlstate: scrubbed.code, message: scrubbed.message }
  } finally {
    await reader.query('ROLLBACK').catch(() => undefined)
  }
  return out
}

/** Rows as a set: the digest does not depend on the order the upstream returned them in. */
function digestOf(rows: readonly (readonly (string | null)[])[]): string {
  const lines = rows.map((r) => JSON.stringify(r)).sort()
  const hash = createHash('sha256')
  for (const line of lines) hash.update(line).update('\n')
  return hash.digest('hex')
}

const minus = (a: readonly string[], b: readonly string[]) => a.filter((x) => !b.includes(x))

function compare(before: SimulatedOutcome, after: SimulatedOutcome) {
  const ok = (o: SimulatedOutcome) => o.allowed && o.error === null
  const removed = minus(before.columns ?? [], after.columns ?? []).concat(
    minus(after.hidden_columns, before.hidden_columns),
  )
  const masked = minus(after.masked_columns, before.masked_columns)
  const unmasked = minus(before.masked_columns, after.masked_columns)
  const rowsDelta = before.rows === null || after.rows === null ? null : after.rows - before.rows
  // Executed: what the user would see (rows, columns). Not executed: what would run.
  const executed = before.rows_digest !== null && after.rows_digest !== null
  const differs = executed
    ? before.rows_digest !== after.rows_digest ||
      JSON.stringify(before.columns) !== JSON.stringify(after.columns)
    : before.rewritten_sql !== after.rewritten_sql
  const change: SimulatedQuery['change'] =
    ok(before) && !ok(after)
      ? 'newly_refused'
      : !ok(before) && ok(after)
        ? 'newly_allowed'
        : differs || removed.length + masked.length + unmasked.length > 0
          ? 'changed'
          : 'unchanged'
  return {
    change,
    rows_delta: rowsDelta,
    columns_removed: [...new Set(removed)].sort(),
    columns_masked: masked,
    columns_unmasked: unmasked,
  }
}

/**
 * What-if replay: the audited statements of a window, for their users, under the current
 * policies and under a proposed change that is applied in a store transaction and rolled back.
 * Reports per statement what the change does to it (refused, allowed, rows, columns, masks).
 */
export async function simulate(
  store: Store,
  request: SimulationRequest,
  actorId: string,
): Promise<SimulationResult> {
  const ds = await store.datasources.get(request.datasourceId)
  const queries = await auditedQueries(store, request)
  const userIds = [...new Set(queries.map((q) => q.userId))]
  const current = await inputsFor(store.sessions, ds.id, userIds)
  const proposed = await store.transaction(
    async (scoped) => {
      await applyProposal(scoped, ds.id, request.changes, actorId)
      return inputsFor(scoped.sessions, ds.id, userIds)
    },
    { rollback: true },
  )
  await loadCore()
  const compiled = async (
    input: SessionInput | null | undefined,
  ): Promise<SimulatedSession | null> => {
    if (!input) return null
    const session = await compileSession(input)
    return { session, catalog: describeCatalog(session) }
  }
  let reader: UpstreamReader | undefined
  if (request.execute && queries.length > 0) {
    reader = await openDatasourceReader(store, ds.id)
  }
  const results: SimulatedQuery[] = []
  try {
    for (const userId of userIds) {
      const before = await compiled(current.get(userId))
      const after = await compiled(proposed.get(userId))
      for (const q of queries.filter((x) => x.userId === userId)) {
        const b = await outcome(before, q.sql, reader, request.maxRows)
        const a = await outcome(after, q.sql, reader, request.maxRows)
        results.push({
          user: { id: q.userId, username: q.username },
          original_sql: q.sql,
          occurrences: q.occurrences,
          last_run_at: q.last,
          before: b,
          after: a,
          ...compare(b, a),
        })
      }
    }
  } finally {
    await reader?.close()
  }
  const count = (change: SimulatedQuery['change']) =>
    results.filter((r) => r.change === change).length
  return {
    datasource: { id: ds.id, name: ds.name },
    summary: {
      queries: results.length,
      users: userIds.length,
      unchanged: count('unchanged'),
      newly_refused: count('newly_refused'),
      newly_allowed: count('newly_allowed'),
      changed: count('changed'),
      fewer_rows: results.filter((r) => (r.rows_delta ?? 0) < 0).length,
      more_rows: results.filter((r) => (r.rows_delta ?? 0) > 0).length,
    },
    queries: results,
  }
}
