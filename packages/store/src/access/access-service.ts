import { and, asc, eq, gt, inArray, isNull, or, sql } from 'drizzle-orm'
import * as v from 'valibot'
import { requireDatasource } from '../datasources/datasources-service.js'
import { type StoreContext, sortedUnique } from '../kernel/context.js'
import { type ErrorDetail, ResourceNotFoundError, StoreError } from '../kernel/errors.js'
import { uuidv7 } from '../kernel/ids.js'
import { membersOf } from '../kernel/role-graph.js'
import { parseBody, uuidString } from '../kernel/validation.js'
import { datasourceAccess, roles, users } from '../tables.js'
import { toUser, type User } from '../users/users-service.js'
import { accessEvent, grantAccess, scopeRows, subjectRow } from './access-grant.js'
import {
  type GrantWindow,
  toWindow,
  type WindowInput,
  windowFields,
  windowIfSet,
} from './grant-window.js'

/** `GET /datasources/{id}/access` (docs/roles-and-access.md#datasource-access). */
export interface DatasourceAccessSummary {
  datasource_id: string
  all: boolean
  users: ({ id: string; username: string } & AccessWindow)[]
  roles: ({ id: string; name: string; is_active: boolean } & AccessWindow)[]
}

/** A time-bound access row's window (both null for a lasting one). */
export interface AccessWindow {
  valid_from?: string | null
  valid_until?: string | null
}

const windowCols = {
  validFrom: datasourceAccess.validFrom,
  validUntil: datasourceAccess.validUntil,
}

/** Rows that have not ended (an ended row awaits the expiry sweep and no longer counts). */
const notEnded = or(
  isNull(datasourceAccess.validUntil),
  gt(datasourceAccess.validUntil, sql`now()`),
)

function withWindow<T>({ validFrom, validUntil, ...rest }: T & GrantWindow): T & AccessWindow {
  return { ...(rest as T), ...windowIfSet({ validFrom, validUntil }) }
}

const idList = (field: string) =>
  v.object({
    [field]: v.pipe(
      v.array(uuidString, 'expected an array of uuids'),
      v.maxLength(10_000, 'at most 10000 ids'),
    ),
  })

function missingDetails(
  field: string,
  ids: readonly string[],
  missing: readonly string[],
): ErrorDetail[] {
  return missing.map((id) => ({
    field: `${field}[${ids.indexOf(id)}]`,
    code: 'not_found',
    message: `${id} not found`,
  }))
}

/** Datasource access entries of scope user, role and all (docs/roles-and-access.md#datasource-access). */
export class AccessService {
  readonly #ctx: StoreContext

  constructor(ctx: StoreContext) {
    this.#ctx = ctx
  }

  /** The three scopes of one datasource. */
  async get(datasourceId: string): Promise<DatasourceAccessSummary> {
    const db = this.#ctx.db
    await requireDatasource(db, datasourceId)
    const rows = await db
      .select({ scope: datasourceAccess.scope })
      .from(datasourceAccess)
      .where(scopeRows(datasourceId, 'all'))
    const userRows = await db
      .select({ id: users.id, username: users.username, ...windowCols })
      .from(datasourceAccess)
      .innerJoin(users, eq(users.id, datasourceAccess.userId))
      .where(and(scopeRows(datasourceId, 'user'), notEnded))
      .orderBy(asc(users.username))
    return {
      datasource_id: datasourceId,
      all: rows.length > 0,
      users: userRows.map(withWindow),
      roles: await this.listRoles(datasourceId),
    }
  }

  /** Users with a user-scoped row, sorted by username, each with its window. */
  async listUsers(datasourceId: string): Promise<(User & AccessWindow)[]> {
    await requireDatasource(this.#ctx.db, datasourceId)
    const rows = await this.#ctx.db
      .select({ user: users, ...windowCols })
      .from(datasourceAccess)
      .innerJoin(users, eq(users.id, datasourceAccess.userId))
      .where(and(scopeRows(datasourceId, 'user'), notEnded))
      .orderBy(asc(users.username))
    return rows.map((r) => ({ ...toUser(r.user), ...windowIfSet(r) }))
  }

  /** Roles with a role-scoped row, sorted by name, each with its window. */
  async listRoles(
    datasourceId: string,
  ): Promise<({ id: string; name: string; is_active: boolean } & AccessWindow)[]> {
    await requireDatasource(this.#ctx.db, datasourceId)
    const rows = await this.#ctx.db
      .select({ id: roles.id, name: roles.name, is_active: roles.isActive, ...windowCols })
      .from(datasourceAccess)
      .innerJoin(roles, eq(roles.id, datasourceAccess.roleId))
      .where(and(scopeRows(datasourceId, 'role'), notEnded))
      .orderBy(asc(roles.name))
    return rows.map(withWindow)
  }

  /**
   * Grants one user or role access for a window (open bounds: from now, for good), creating or
   * re-windowing its row; audited as data_source_access/grant_access with the window.
   */
  async grant(
    datasourceId: string,
    subject: { scope: 'user' | 'role'; id: string },
    input: WindowInput,
    actorId: string,
  ): Promise<void> {
    await this.#ctx.mutate(actorId, async (m) => {
      await requireDatasource(m.tx, datasourceId, true)
      const window = toWindow(parseBody(v.object(windowFields), input), m.now)
      const table = subject.scope === 'user' ? users : roles
      const [found] = await m.tx.select().from(table).where(eq(table.id, subject.id))
      if (!found) throw new ResourceNotFoundError(subject.scope)
      if ('isActive' in found && subject.scope === 'role' && !found.isActive) {
        throw new StoreError('inactive_role', 'inactive roles cannot be granted access')
      }
      if (!(await grantAccess(m, datasourceId, subject, window))) m.noop()
    })
  }

  /** Revokes one user's or role's access row; 404 when there is none. */
  async revoke(
    datasourceId: string,
    subject: { scope: 'user' | 'role'; id: string },
    actorId: string,
  ): Promise<void> {
    await this.#ctx.mutate(actorId, async (m) => {
      await requireDatasource(m.tx, datasourceId, true)
      const removed = await m.tx
        .delete(datasourceAccess)
        .where(and(subjectRow(datasourceId, subject), notEnded))
        .returning()
      if (removed.length === 0) throw new ResourceNotFoundError('access entry')
      m.audit('data_source_access', datasourceId, 'revoke_access', {
        datasource_id: datasourceId,
        scope: subject.scope,
        [`${subject.scope}_id`]: subject.id,
      })
      m.invalidate(await accessEvent(m.tx, datasourceId, subject))
    })
  }

  /** Replaces the user-scoped list; audited as datasource/update `user_access`. */
  async setUsers(
    datasourceId: string,
    input: { user_ids: string[] },
    actorId: string,
  ): Promise<void> {
    await this.#ctx.mutate(actorId, async (m) => {
      await requireDatasource(m.tx, datasourceId, true)
      const ids = sortedUnique(parseBody(idList('user_ids'), input)['user_ids'] as string[])
      const found = ids.length
        ? await m.tx.select({ id: users.id }).from(users).where(inArray(users.id, ids))
        : []
      const known = new Set(found.map((r) => r.id))
      const raw = (input as { user_ids: string[] }).user_ids
      const missing = ids.filter((id) => !known.has(id))
      if (missing.length > 0) {
        throw new StoreError(
          'not_found',
          'user not found',
          missingDetails('user_ids', raw, missing),
        )
      }
      const before = await this.#current(m.tx, datasourceId, 'user')
      if (JSON.stringify(before) === JSON.stringify(ids)) return m.noop()
      await this.#replace(m.tx, datasourceId, 'user', ids, m.now)
      m.audit('datasource', datasourceId, 'update', { field: 'user_access', before, after: ids })
      m.invalidate({ type: 'ds_users', datasourceId, userIds: sortedUnique([...before, ...ids]) })
    })
  }

  /**
   * Replaces the role-scoped list. Every role is checked before anything is written:
   * 404 unknown roles, then 400 inactive_role listing the inactive ones (docs/decision-functions.md#outcomes).
   */
  async setRoles(
    datasourceId: string,
    input: { role_ids: string[] },
    actorId: string,
  ): Promise<void> {
    await this.#ctx.mutate(actorId, async (m) => {
      await requireDatasource(m.tx, datasourceId, true)
      const ids = sortedUnique(parseBody(idList('role_ids'), input)['role_ids'] as string[])
      const found = ids.length
        ? await m.tx
            .select({ id: roles.id, name: roles.name, isActive: roles.isActive })
            .from(roles)
            .where(inArray(roles.id, ids))
        : []
      const raw = (input as { role_ids: string[] }).role_ids
      const known = new Map(found.map((r) => [r.id, r]))
      const missing = ids.filter((id) => !known.has(id))
      if (missing.length > 0) {
        throw new StoreError(
          'not_found',
          'role not found',
          missingDetails('role_ids', raw, missing),
        )
      }
      const inactive = found.filter((r) => !r.isActive)
      if (inactive.length > 0) {
        throw new StoreError(
          'inactive_role',
          'inactive roles cannot be granted access',
          inactive.map((r) => ({
            field: `role_ids[${raw.indexOf(r.id)}]`,
            code: 'not_allowed',
            message: `role ${r.name} is inactive`,
          })),
        )
      }
      const before = await this.#current(m.tx, datasourceId, 'role')
      if (JSON.stringify(before) === JSON.stringify(ids)) return m.noop()
      await this.#replace(m.tx, datasourceId, 'role', ids, m.now)
      m.audit('datasource', datasourceId, 'update', { field: 'role_access', before, after: ids })
      const userIds = await membersOf(m.tx, sortedUnique([...before, ...ids]))
      m.invalidate({ type: 'ds_users', datasourceId, userIds })
    })
  }

  /** Turns the all-scope entry on or off; audited as data_source_access grant/revoke. */
  async setAll(datasourceId: string, input: { enabled: boolean }, actorId: string): Promise<void> {
    await this.#ctx.mutate(actorId, async (m) => {
      await requireDatasource(m.tx, datasourceId, true)
      const { enabled } = parseBody(v.object({ enabled: v.boolean('expected a boolean') }), input)
      const current = (await this.#current(m.tx, datasourceId, 'all')).length > 0
      if (current === enabled) return m.noop()
      await this.#replace(m.tx, datasourceId, 'all', enabled ? [datasourceId] : [], m.now)
      m.audit('data_source_access', datasourceId, enabled ? 'grant_access' : 'revoke_access', {
        datasource_id: datasourceId,
        scope: 'all',
      })
      m.invalidate({ type: 'ds', datasourceId })
    })
  }

  async #current(db: StoreContext['db'], datasourceId: string, scope: 'user' | 'role' | 'all') {
    const rows = await db
      .select()
      .from(datasourceAccess)
      .where(and(scopeRows(datasourceId, scope), notEnded))
    return sortedUnique(rows.map((r) => r.userId ?? r.roleId ?? r.datasourceId))
  }

  async #replace(
    db: StoreContext['db'],
    datasourceId: string,
    scope: 'user' | 'role' | 'all',
    ids: readonly string[],
    now: Date,
  ): Promise<void> {
    // Rows that stay keep their windows; only removed ids go and only new ids are inserted.
    const keep = new Set(ids)
    const rows = await db.select().from(datasourceAccess).where(scopeRows(datasourceId, scope))
    const present = new Set<string>()
    const gone: string[] = []
    for (const r of rows) {
      const id = r.userId ?? r.roleId ?? r.datasourceId
      const ended = r.validUntil !== null && r.validUntil <= now
      if (keep.has(id) && !ended) present.add(id)
      else gone.push(r.id)
    }
    if (gone.length > 0) await db.delete(datasourceAccess).where(inArray(datasourceAccess.id, gone))
    const added = ids.filter((id) => !present.has(id))
    if (added.length === 0) return
    await db.insert(datasourceAccess).values(
      added.map((id) => ({
        id: uuidv7(),
        datasourceId,
        scope,
        userId: scope === 'user' ? id : null,
        roleId: scope === 'role' ? id : null,
        createdAt: now,
      })),
    )
  }
}
