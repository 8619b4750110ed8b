import { and, asc, eq, inArray } from 'drizzle-orm'
import * as v from 'valibot'
import { type StoreContext, sortedUnique } from './context.js'
import { requireDatasource } from './datasources-service.js'
import { type ErrorDetail, StoreError } from './errors.js'
import { uuidv7 } from './ids.js'
import { membersOf } from './role-graph.js'
import { datasourceAccess, roles, users } from './schema/index.js'
import { toUser, type User } from './users-service.js'
import { parseBody, uuidString } from './validation.js'

/** `GET /datasources/{id}/access` (admin-api 8). */
export interface DatasourceAccessSummary {
  datasource_id: string
  all: boolean
  users: { id: string; username: string }[]
  roles: { id: string; name: string; is_active: boolean }[]
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

/** Datasource access entries of scope user, role and all (admin-api 8). */
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
      .where(
        and(eq(datasourceAccess.datasourceId, datasourceId), eq(datasourceAccess.scope, 'all')),
      )
    const userRows = await db
      .select({ id: users.id, username: users.username })
      .from(datasourceAccess)
      .innerJoin(users, eq(users.id, datasourceAccess.userId))
      .where(
        and(eq(datasourceAccess.datasourceId, datasourceId), eq(datasourceAccess.scope, 'user')),
      )
      .orderBy(asc(users.username))
    return {
      datasource_id: datasourceId,
      all: rows.length > 0,
      users: userRows,
      roles: await this.listRoles(datasourceId),
    }
  }

  /** Users with a user-scoped row, sorted by username. */
  async listUsers(datasourceId: string): Promise<User[]> {
    await requireDatasource(this.#ctx.db, datasourceId)
    const rows = await this.#ctx.db
      .select({ user: users })
      .from(datasourceAccess)
      .innerJoin(users, eq(users.id, datasourceAccess.userId))
      .where(
        and(eq(datasourceAccess.datasourceId, datasourceId), eq(datasourceAccess.scope, 'user')),
      )
      .orderBy(asc(users.username))
    return rows.map((r) => toUser(r.user))
  }

  /** Roles with a role-scoped row, sorted by name. */
  async listRoles(
    datasourceId: string,
  ): Promise<{ id: string; name: string; is_active: boolean }[]> {
    await requireDatasource(this.#ctx.db, datasourceId)
    return this.#ctx.db
      .select({ id: roles.id, name: roles.name, is_active: roles.isActive })
      .from(datasourceAccess)
      .innerJoin(roles, eq(roles.id, datasourceAccess.roleId))
      .where(
        and(eq(datasourceAccess.datasourceId, datasourceId), eq(datasourceAccess.scope, 'role')),
      )
      .orderBy(asc(roles.name))
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
   * 404 unknown roles, then 400 inactive_role listing the inactive ones (spec 3).
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
      .where(
        and(eq(datasourceAccess.datasourceId, datasourceId), eq(datasourceAccess.scope, scope)),
      )
    return sortedUnique(rows.map((r) => r.userId ?? r.roleId ?? r.datasourceId))
  }

  async #replace(
    db: StoreContext['db'],
    datasourceId: string,
    scope: 'user' | 'role' | 'all',
    ids: readonly string[],
    now: Date,
  ): Promise<void> {
    await db
      .delete(datasourceAccess)
      .where(
        and(eq(datasourceAccess.datasourceId, datasourceId), eq(datasourceAccess.scope, scope)),
      )
    if (ids.length === 0) return
    await db.insert(datasourceAccess).values(
      ids.map((id) => ({
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
