import { and, asc, count, eq, ilike } from 'drizzle-orm'
import * as v from 'valibot'
import { diffFields, iso, isoNow, type StoreContext } from '../kernel/context.js'
import { type Db, onUniqueViolation } from '../kernel/db.js'
import { ResourceConflictError, ResourceNotFoundError, ValidationError } from '../kernel/errors.js'
import { uuidv7 } from '../kernel/ids.js'
import { type Page, type PageInput, resolvePage } from '../kernel/pagination.js'
import { boundedString, intRange, jsonObject, parseBody } from '../kernel/validation.js'
import { removeAssignments } from '../policies/assignment-cascade.js'
import { datasources, policyAssignments } from '../tables.js'
import {
  DATASOURCE_TYPES,
  DS_TYPES,
  type DsType,
  type PgliteDatasourceConfig,
  type PostgresDatasourceConfig,
  parseConfig,
} from './datasource-config.js'

/** A datasource as the admin API returns it (docs/resources.md#datasources); the password never appears. */
export interface Datasource {
  id: string
  name: string
  ds_type: DsType
  config: Record<string, unknown> & { password_set?: boolean }
  access_mode: 'open' | 'policy_required'
  is_active: boolean
  statement_timeout_ms: number
  pool_size: number
  /** How clients share upstream sessions; null: the server's default (`--pool-mode`). */
  pool_mode: PoolMode | null
  /** Whether classification may sample column values (docs/policies.md, "Classification"). */
  classification_sampling: boolean
  last_sync_at: string | null
  last_sync_result: unknown
  created_at: string
  updated_at: string
}

/** The stored config with the password decrypted, for the server's upstream connections only. */
export type DatasourceConnection = {
  id: string
  name: string
  statement_timeout_ms: number
  pool_size: number
  pool_mode: PoolMode | null
  is_active: boolean
} & (
  | { ds_type: 'postgres'; config: PostgresDatasourceConfig }
  | { ds_type: 'pglite'; config: PgliteDatasourceConfig }
)

/** Body of `POST /datasources`. */
export interface CreateDatasourceInput {
  name: string
  ds_type: string
  config: Record<string, unknown>
  access_mode?: string | null
  is_active?: boolean | null
  statement_timeout_ms?: number | null
  pool_size?: number | null
  pool_mode?: string | null
  classification_sampling?: boolean | null
}

/** How clients share a datasource's upstream sessions, as pgbouncer names the modes. */
export const POOL_MODES = ['session', 'transaction'] as const
export type PoolMode = (typeof POOL_MODES)[number]

const fields = {
  name: v.pipe(
    boundedString(1, 64),
    v.regex(/^[A-Za-z][A-Za-z0-9_-]*$/, 'must match [A-Za-z][A-Za-z0-9_-]*'),
  ),
  ds_type: v.picklist(DS_TYPES, 'expected postgres or pglite'),
  /** The keys of each `ds_type` are checked by parseConfig, which knows the merge rules. */
  config: jsonObject,
  access_mode: v.nullish(
    v.picklist(['open', 'policy_required'], 'expected open or policy_required'),
  ),
  is_active: v.nullish(v.boolean('expected a boolean')),
  statement_timeout_ms: v.nullish(intRange(0, 86_400_000)),
  pool_size: v.nullish(intRange(1, 200)),
  pool_mode: v.nullish(v.picklist(POOL_MODES, 'expected session or transaction')),
  classification_sampling: v.nullish(v.boolean('expected a boolean')),
}
export const createDatasourceSchema = v.object(fields)
export const updateDatasourceSchema = v.partial(v.object(fields))

type Row = typeof datasources.$inferSelect

function toDatasource(row: Row): Datasource {
  return {
    id: row.id,
    name: row.name,
    ds_type: row.dsType as DsType,
    config: {
      ...row.config,
      ...(row.dsType === 'postgres' ? { password_set: row.secret !== null } : {}),
    },
    access_mode: row.accessMode as Datasource['access_mode'],
    is_active: row.isActive,
    statement_timeout_ms: row.statementTimeoutMs,
    pool_size: row.poolSize,
    pool_mode: row.poolMode as PoolMode | null,
    classification_sampling: row.classificationSampling,
    last_sync_at: iso(row.lastSyncAt),
    last_sync_result: row.lastSyncResult ?? null,
    created_at: isoNow(row.createdAt),
    updated_at: isoNow(row.updatedAt),
  }
}

const snapshot = (r: Row) => ({
  name: r.name,
  ds_type: r.dsType,
  access_mode: r.accessMode,
  is_active: r.isActive,
  statement_timeout_ms: r.statementTimeoutMs,
  pool_size: r.poolSize,
})

/** Loads a datasource row or throws 404. */
export async function requireDatasource(db: Db, id: string, lock = false): Promise<Row> {
  const query = db.select().from(datasources).where(eq(datasources.id, id))
  const [row] = lock ? await query.for('update') : await query
  if (!row) throw new ResourceNotFoundError('datasource')
  return row
}

/** Datasources and their sealed upstream secrets (docs/resources.md#datasources). */
export class DatasourcesService {
  readonly #ctx: StoreContext

  constructor(ctx: StoreContext) {
    this.#ctx = ctx
  }

  /** The config fields of each datasource type. */
  types(): typeof DATASOURCE_TYPES {
    return DATASOURCE_TYPES
  }

  /** Creates a datasource; nobody gets access until granted. 422, 409 already_exists. */
  async create(input: CreateDatasourceInput, actorId: string): Promise<Datasource> {
    const body = parseBody(createDatasourceSchema, input)
    const config = parseConfig(body.ds_type, body.config)
    return this.#ctx.mutate(actorId, async (m) => {
      const [row] = await onUniqueViolation(
        () =>
          m.tx
            .insert(datasources)
            .values({
              id: uuidv7(),
              name: body.name,
              dsType: body.ds_type,
              config: config.settings,
              secret: config.password ? this.#ctx.secrets.seal(config.password) : null,
              accessMode: body.access_mode ?? 'policy_required',
              isActive: body.is_active ?? true,
              statementTimeoutMs: body.statement_timeout_ms ?? 0,
              poolSize: body.pool_size ?? 10,
              poolMode: body.pool_mode ?? null,
              classificationSampling: body.classification_sampling ?? true,
              createdBy: actorId,
              updatedBy: actorId,
              createdAt: m.now,
              updatedAt: m.now,
            })
            .returning(),
        () => new ResourceConflictError('datasource name already exists', 'name'),
      )
      m.audit('datasource', (row as Row).id, 'create', { after: snapshot(row as Row) })
      return toDatasource(row as Row)
    })
  }

  /** One datasource; 404 when unknown. */
  async get(id: string): Promise<Datasource> {
    return toDatasource(await requireDatasource(this.#ctx.db, id))
  }

  /** A datasource by its exact name, or null. */
  async findByName(name: string): Promise<Datasource | null> {
    const [row] = await this.#ctx.db.select().from(datasources).where(eq(datasources.name, name))
    return row ? toDatasource(row) : null
  }

  /** Paginated datasources, oldest first. */
  async list(input: PageInput & { search?: string | undefined } = {}): Promise<Page<Datasource>> {
    const { page, pageSize, offset } = resolvePage(input, { size: 20, cap: 100 })
    const where = input.search
      ? ilike(datasources.name, `%${input.search.replace(/[\\%_]/g, '\\$&')}%`)
      : undefined
    const rows = await this.#ctx.db
      .select()
      .from(datasources)
      .where(where)
      .orderBy(asc(datasources.createdAt), asc(datasources.id))
      .limit(pageSize)
      .offset(offset)
    const [total] = await this.#ctx.db.select({ n: count() }).from(datasources).where(where)
    return { data: rows.map(toDatasource), total: total?.n ?? 0, page, page_size: pageSize }
  }

  /** The config with the decrypted password, for opening upstream connections. */
  async getConnection(id: string): Promise<DatasourceConnection> {
    const row = await requireDatasource(this.#ctx.db, id)
    // The config was validated for its type when saved (parseConfig).
    return {
      id: row.id,
      name: row.name,
      ds_type: row.dsType,
      config: {
        ...row.config,
        ...(row.secret ? { password: this.#ctx.secrets.open(row.secret) } : {}),
      },
      statement_timeout_ms: row.statementTimeoutMs,
      pool_size: row.poolSize,
      pool_mode: row.poolMode as PoolMode | null,
      is_active: row.isActive,
    } as DatasourceConnection
  }

  /** Partial update; `config` merges key by key (docs/resources.md#datasources). */
  async update(
    id: string,
    input: Partial<CreateDatasourceInput>,
    actorId: string,
  ): Promise<Datasource> {
    return this.#ctx.mutate(actorId, async (m) => {
      const row = await requireDatasource(m.tx, id, true)
      const body = parseBody(updateDatasourceSchema, input)
      for (const key of [
        'name',
        'ds_type',
        'config',
        'access_mode',
        'is_active',
        'statement_timeout_ms',
        'pool_size',
      ]) {
        if (input && (input as Record<string, unknown>)[key] === null) {
          throw new ValidationError([
            { field: key, code: 'invalid_type', message: `${key} cannot be null` },
          ])
        }
      }
      const dsType = body.ds_type ?? (row.dsType as DsType)
      let settings = row.config
      let secret = row.secret
      if (dsType !== row.dsType) {
        // A type change replaces the whole config; nothing is merged.
        const parsed = parseConfig(dsType, body.config ?? {})
        settings = parsed.settings
        secret = parsed.password ? this.#ctx.secrets.seal(parsed.password) : null
      } else if (body.config !== undefined) {
        const incoming = body.config as Record<string, unknown>
        const { password: _pw, ...stored } = row.config
        const merged = { ...stored, ...incoming }
        if (!('password' in incoming)) delete merged['password']
        const parsed = parseConfig(dsType, merged)
        settings = parsed.settings
        if (parsed.password === null) secret = null
        else if (typeof parsed.password === 'string') {
          const same = row.secret !== null && this.#ctx.secrets.open(row.secret) === parsed.password
          if (!same) secret = this.#ctx.secrets.seal(parsed.password)
        }
      }
      const next: Row = {
        ...row,
        name: body.name ?? row.name,
        dsType,
        accessMode: body.access_mode ?? row.accessMode,
        isActive: body.is_active ?? row.isActive,
        statementTimeoutMs: body.statement_timeout_ms ?? row.statementTimeoutMs,
        poolSize: body.pool_size ?? row.poolSize,
        // null returns the datasource to the server's default pool mode.
        poolMode: body.pool_mode === undefined ? row.poolMode : body.pool_mode,
        classificationSampling: body.classification_sampling ?? row.classificationSampling,
      }
      // The pool mode is audited when it changes; the create entry keeps the contract's fields.
      const extra = (r: Row) => ({
        pool_mode: r.poolMode,
        classification_sampling: r.classificationSampling,
      })
      const diff = diffFields(
        { ...snapshot(row), ...extra(row) },
        { ...snapshot(next), ...extra(next) },
      )
      const configChanged =
        JSON.stringify(settings) !== JSON.stringify(row.config) || secret !== row.secret
      if (!diff && !configChanged) {
        m.noop()
        return toDatasource(row)
      }
      const [updated] = await onUniqueViolation(
        () =>
          m.tx
            .update(datasources)
            .set({
              name: next.name,
              dsType: next.dsType,
              accessMode: next.accessMode,
              isActive: next.isActive,
              statementTimeoutMs: next.statementTimeoutMs,
              poolSize: next.poolSize,
              poolMode: next.poolMode,
              classificationSampling: next.classificationSampling,
              config: settings,
              secret,
              updatedBy: actorId,
              updatedAt: m.now,
            })
            .where(eq(datasources.id, id))
            .returning(),
        () => new ResourceConflictError('datasource name already exists', 'name'),
      )
      m.audit('datasource', id, 'update', {
        ...(diff ?? { before: {}, after: {} }),
        ...(configChanged ? { config_changed: true } : {}),
      })
      if (diff && ['name', 'access_mode', 'is_active'].some((k) => k in diff.after)) {
        m.invalidate({ type: 'ds', datasourceId: id })
      }
      return toDatasource(updated as Row)
    })
  }

  /** Deletes a datasource with its catalog, access rows, assignments, relationships and anchors. */
  async delete(id: string, actorId: string): Promise<void> {
    await this.#ctx.mutate(actorId, async (m) => {
      const row = await requireDatasource(m.tx, id, true)
      const assignments = await m.tx
        .select()
        .from(policyAssignments)
        .where(eq(policyAssignments.datasourceId, id))
      await removeAssignments(m, assignments, 'datasource_deleted')
      // Access rows, catalog, relationships and anchors go with the row (ON DELETE CASCADE).
      await m.tx.delete(datasources).where(and(eq(datasources.id, id)))
      m.audit('datasource', id, 'delete', { before: snapshot(row) })
      m.invalidate({ type: 'ds', datasourceId: id })
    })
  }
}
