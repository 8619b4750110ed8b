import type {
  AccessMode,
  AttributeDefinition,
  AttributeValueType,
  Catalog,
  ColumnAnchor,
  SessionInput,
  TableRelationship,
} from '@palisade/core'
import { eq, inArray, sql } from 'drizzle-orm'
import { activeNow, nextBound } from '../access/grant-window.js'
import type { CatalogEdit, EditedRelation } from '../kernel/catalog-edit.js'
import type { ChangeNotice } from '../kernel/change-feed.js'
import type { StoreContext } from '../kernel/context.js'
import { type Db, rowsOf } from '../kernel/db.js'
import { ResourceNotFoundError, SessionDeniedError } from '../kernel/errors.js'
import {
  type EffectiveLimits,
  hasLimits,
  type Limits,
  storedLimits,
  tightestLimits,
} from '../kernel/limits.js'
import { MAX_ROLE_DEPTH, type ResolvedRole, resolveUserRoles } from '../kernel/role-graph.js'
import {
  type EffectivePolicyEntry,
  loadDatasourceAssignments,
  type Reaching,
  reaching,
  toEffectiveEntries,
  toEffectivePolicies,
} from '../policies/effective-policies.js'
import { readLinks } from '../relationships/relationship-rows.js'
import { attributeDefinitions, datasources, users } from '../tables.js'
import { readSessionCatalog } from './session-catalog.js'
import { patchSessionCatalog } from './session-catalog-patch.js'

let epochCounter = 0

/**
 * A session input with the user's effective limits (docs/roles-and-access.md#limits): the
 * tightest of their own and those of every role reaching them; absent when none is set.
 */
export type LimitedSessionInput = SessionInput & { limits?: EffectiveLimits }

interface DatasourceStatics {
  version: number
  catalog: Catalog
  relationships: TableRelationship[]
  anchors: ColumnAnchor[]
}

interface Identity {
  user: {
    id: string
    username: string
    is_active: boolean
    attributes: Record<string, unknown>
    limits: Limits | null
  } | null
  ds: {
    id: string
    name: string
    access_mode: AccessMode
    is_active: boolean
    catalog_version: number
  } | null
  roles: (ResolvedRole & { limits: Limits | null })[]
  allowed: boolean
  defs_version: string
  /** Text, since bigint arrives as a string from node-postgres. */
  policy_version: string
  /** The next instant (epoch ms) a membership or access window of this pair starts or ends. */
  next_bound: number | null
}

/**
 * One round trip for everything a connection check needs: the user, the datasource, the
 * user's roles (docs/roles-and-access.md#roles: upward from direct roles through active roles, at most 10 levels),
 * whether any access scope matches, and a fingerprint of the user attribute definitions.
 */
async function loadIdentity(
  db: Db,
  by: { username: string; dsName: string } | { userId: string; dsId: string },
): Promise<Identity> {
  const userCond = 'username' in by ? sql`username = ${by.username}` : sql`id = ${by.userId}`
  const dsCond = 'dsName' in by ? sql`name = ${by.dsName}` : sql`id = ${by.dsId}`
  const [row] = await rowsOf<Identity>(
    db.execute(sql`
      WITH RECURSIVE
        u AS (SELECT id, username, is_active, attributes, limits FROM users WHERE ${userCond}),
        d AS (SELECT id, name, access_mode, is_active, catalog_version FROM datasources WHERE ${dsCond}),
        walk(id, depth) AS (
          SELECT r.id, 0 FROM role_members m JOIN roles r ON r.id = m.role_id AND r.is_active
          WHERE m.user_id = (SELECT id FROM u) AND ${activeNow('m')}
          UNION
          SELECT p.id, w.depth + 1 FROM walk w
          JOIN role_inheritance e ON e.role_id = w.id
          JOIN roles p ON p.id = e.parent_role_id AND p.is_active
          WHERE w.depth < ${MAX_ROLE_DEPTH}
        ),
        resolved AS (
          SELECT r.id, r.name, r.limits, min(w.depth)::int AS depth
          FROM walk w JOIN roles r ON r.id = w.id
          GROUP BY r.id, r.name, r.limits
        )
      SELECT
        (SELECT row_to_json(u) FROM u) AS "user",
        (SELECT row_to_json(d) FROM d) AS ds,
        (SELECT coalesce(json_agg(json_build_object('id', id, 'name', name, 'depth', depth, 'limits', limits)
           ORDER BY depth, name), '[]'::json) FROM resolved) AS roles,
        EXISTS (
          SELECT 1 FROM datasource_access a
          WHERE a.datasource_id = (SELECT id FROM d) AND ${activeNow('a')} AND (
            a.scope = 'all'
            OR (a.scope = 'user' AND a.user_id = (SELECT id FROM u))
            OR (a.scope = 'role' AND a.role_id IN (SELECT id FROM resolved)))
        ) AS allowed,
        (SELECT concat(count(*), '/', max(updated_at), '/', max(created_at))
           FROM attribute_definitions WHERE entity_type = 'user') AS defs_version,
        (SELECT policy_version::text FROM store_state WHERE id = 1) AS policy_version,
        (SELECT (extract(epoch FROM min(b)) * 1000)::float8 FROM (
           SELECT unnest(ARRAY[m.valid_from, m.valid_until]) AS b FROM role_members m
           WHERE m.user_id = (SELECT id FROM u)
             AND (m.valid_from IS NOT NULL OR m.valid_until IS NOT NULL)
           UNION ALL
           SELECT unnest(ARRAY[a.valid_from, a.valid_until]) FROM datasource_access a
           WHERE a.datasource_id = (SELECT id FROM d)
             AND (a.valid_from IS NOT NULL OR a.valid_until IS NOT NULL)
         ) bounds WHERE b > now()) AS next_bound`),
  )
  if (!row) throw new SessionDeniedError()
  return row
}

/**
 * When a session built now must be rebuilt because a grant window starts or ends: the earliest
 * bound ahead among the pair's memberships and access rows and the datasource's assignments.
 */
function validUntilOf(
  identityBound: number | null,
  assignments: readonly Reaching[],
  at: number,
): { validUntil?: number } {
  const bounds = [
    nextBound(
      assignments.map(({ a }) => a),
      at,
    ),
    identityBound,
  ]
  const next = bounds.reduce<number | null>(
    (min, b) => (b !== null && (min === null || b < min) ? b : min),
    null,
  )
  return next === null ? {} : { validUntil: next }
}

/** Derivation label of each datasource's keyed-hash mask key. */
const MASK_KEY_PURPOSE = 'palisade-mask-key:'
/** Catalog edits kept per datasource: a kept catalog further behind is read whole. */
const MAX_EDITS = 64

/** Builds the data plane's session contexts (docs/roles-and-access.md#roles, design 2). */
export class SessionContextBuilder {
  readonly #ctx: StoreContext
  readonly #staticsCache = new Map<string, { version: number; entry: Promise<DatasourceStatics> }>()
  readonly #policyCache = new Map<string, { version: string; rows: Reaching[] }>()
  #defsCache: { fingerprint: string; defs: AttributeDefinition[] } | undefined
  /** Committed catalog edits heard in this process, by datasource and version. */
  readonly #edits = new Map<string, Map<number, CatalogEdit>>()

  constructor(ctx: StoreContext) {
    this.#ctx = ctx
  }

  /**
   * Hears a committed change (the store subscribes it to its change feed): a catalog change
   * that says which tables it wrote lets the next read patch the kept catalog.
   */
  hear(change: ChangeNotice): void {
    if (change.type !== 'ds' || !change.catalogEdit) return
    let edits = this.#edits.get(change.datasourceId)
    if (!edits) {
      edits = new Map()
      this.#edits.set(change.datasourceId, edits)
    }
    edits.set(change.catalogEdit.version, change.catalogEdit)
    for (const version of edits.keys()) {
      if (version <= change.catalogEdit.version - MAX_EDITS) edits.delete(version)
    }
  }

  /**
   * The session input for a connection. Unknown or inactive user, unknown or inactive datasource
   * and missing access all throw the same `SessionDeniedError`, so they cannot be told apart.
   */
  async buildSessionInput(username: string, datasourceName: string): Promise<LimitedSessionInput> {
    return this.#build({ username, dsName: datasourceName })
  }

  /** The same by ids, for rebuilding a live session (renames must not break it). */
  async rebuildSessionInput(userId: string, datasourceId: string): Promise<LimitedSessionInput> {
    return this.#build({ userId, dsId: datasourceId })
  }

  /**
   * Reads again, in the background, the catalog of the datasources whose catalog is kept (all,
   * or the one given) when its version moved, so the next login after a catalog change finds it
   * read. The data plane calls it on every change it hears.
   */
  async warm(datasourceId?: string): Promise<void> {
    const kept = [...this.#staticsCache.keys()]
    const ids = datasourceId === undefined ? kept : kept.filter((id) => id === datasourceId)
    await this.#read(ids)
  }

  /**
   * Reads the session catalog of one datasource now, kept or not: a catalog job calls it before
   * it reports done, so even the first login after the first save finds the catalog read.
   */
  async prepare(datasourceId: string): Promise<void> {
    await this.#read([datasourceId])
  }

  async #read(ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return
    const db = this.#ctx.db
    const rows = await db
      .select({ id: datasources.id, version: datasources.catalogVersion })
      .from(datasources)
      .where(inArray(datasources.id, [...ids]))
    await Promise.all(rows.map((r) => this.#statics(db, r.id, r.version)))
  }

  /** Every assignment reaching a user on a datasource, annotated (docs/roles-and-access.md#checking-what-applies-to-a-user). */
  async effectivePolicies(userId: string, datasourceId: string): Promise<EffectivePolicyEntry[]> {
    const db = this.#ctx.db
    const [user] = await db.select({ id: users.id }).from(users).where(eq(users.id, userId))
    if (!user) throw new ResourceNotFoundError('user')
    const [ds] = await db
      .select({ id: datasources.id })
      .from(datasources)
      .where(eq(datasources.id, datasourceId))
    if (!ds) throw new ResourceNotFoundError('datasource')
    const roles = await resolveUserRoles(db, userId)
    const rows = reaching(await loadDatasourceAssignments(db, datasourceId), userId, roles)
    return toEffectiveEntries(rows, roles)
  }

  async #build(
    by: { username: string; dsName: string } | { userId: string; dsId: string },
  ): Promise<LimitedSessionInput> {
    const db = this.#ctx.db
    const identity = await loadIdentity(db, by)
    const { user, ds } = identity
    if (!user?.is_active || !ds?.is_active || !identity.allowed) throw new SessionDeniedError()
    const at = Date.now()
    const [assignments, statics, defs] = await Promise.all([
      this.#assignments(db, ds.id, identity.policy_version),
      this.#statics(db, ds.id, ds.catalog_version),
      this.#definitions(db, identity.defs_version),
    ])
    const limits = tightestLimits([
      storedLimits(user.limits),
      ...identity.roles.map((r) => storedLimits(r.limits)),
    ])
    return {
      ...(hasLimits(limits) ? { limits } : {}),
      user: {
        id: user.id,
        username: user.username,
        roles: identity.roles.map((r) => r.name),
        attributes: user.attributes,
      },
      datasource: {
        id: ds.id,
        name: ds.name,
        accessMode: ds.access_mode,
        // Keyed-hash masks: the same on every instance sharing the store, distinct per datasource.
        maskKey: this.#ctx.secrets.derive(`${MASK_KEY_PURPOSE}${ds.id}`).toString('hex'),
      },
      catalog: statics.catalog,
      attributeDefinitions: defs,
      policies: toEffectivePolicies(reaching(assignments, user.id, identity.roles, at)),
      relationships: statics.relationships,
      anchors: statics.anchors,
      epoch: ++epochCounter,
      ...validUntilOf(identity.next_bound, assignments, at),
    }
  }

  /** All assignments of a datasource, reused while the store-wide policy version holds. */
  async #assignments(db: Db, dsId: string, version: string): Promise<Reaching[]> {
    const hit = this.#policyCache.get(dsId)
    if (hit && hit.version === version) return hit.rows
    const rows = await loadDatasourceAssignments(db, dsId)
    if (this.#policyCache.size >= 256) this.#policyCache.clear()
    this.#policyCache.set(dsId, { version, rows })
    return rows
  }

  /**
   * Catalog, relationships and anchors, reused while the datasource's catalog version holds;
   * logins that arrive while a version is read wait for that one read.
   */
  async #statics(db: Db, dsId: string, version: number): Promise<DatasourceStatics> {
    const hit = this.#staticsCache.get(dsId)
    if (hit && hit.version === version) return hit.entry
    const edited = hit ? this.#editedSince(dsId, hit.version, version) : undefined
    const entry = (async (): Promise<DatasourceStatics> => {
      const [catalog, links] = await Promise.all([
        edited && hit ? this.#patched(db, dsId, hit.entry, edited) : readSessionCatalog(db, dsId),
        readLinks(db, dsId),
      ])
      return { version, catalog, ...links }
    })()
    // A catalog read in a transaction that raced a newer save is simply replaced next time.
    if (this.#staticsCache.size >= 256) this.#staticsCache.clear()
    this.#staticsCache.set(dsId, { version, entry })
    entry.catch(() => {
      if (this.#staticsCache.get(dsId)?.entry === entry) this.#staticsCache.delete(dsId)
    })
    return entry
  }

  /** The relations edited from `from` to `to`, when every version between was heard. */
  #editedSince(dsId: string, from: number, to: number): EditedRelation[] | undefined {
    const edits = this.#edits.get(dsId)
    if (!edits || to <= from || to - from > MAX_EDITS) return undefined
    const relations: EditedRelation[] = []
    for (let version = from + 1; version <= to; version++) {
      const edit = edits.get(version)
      if (!edit) return undefined
      relations.push(...edit.relations)
    }
    return relations
  }

  /** The kept catalog with `relations` read again; read whole when it cannot be patched. */
  async #patched(
    db: Db,
    dsId: string,
    kept: Promise<DatasourceStatics>,
    relations: EditedRelation[],
  ): Promise<Catalog> {
    const base = await kept.then(
      (statics) => statics.catalog,
      () => undefined,
    )
    const patched = base && (await patchSessionCatalog(db, dsId, base, relations))
    return patched ?? readSessionCatalog(db, dsId)
  }

  /** `user` attribute definitions, reused while their fingerprint holds. */
  async #definitions(db: Db, fingerprint: string): Promise<AttributeDefinition[]> {
    if (this.#defsCache?.fingerprint === fingerprint) return this.#defsCache.defs
    const rows = await db
      .select()
      .from(attributeDefinitions)
      .where(eq(attributeDefinitions.entityType, 'user'))
    const defs = rows.map((d) => ({
      key: d.key,
      valueType: d.valueType as AttributeValueType,
      defaultValue: d.defaultValue ?? null,
    }))
    this.#defsCache = { fingerprint, defs }
    return defs
  }
}
