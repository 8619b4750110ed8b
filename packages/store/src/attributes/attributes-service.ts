import { and, asc, count, eq, ilike, or, sql } from 'drizzle-orm'
import * as v from 'valibot'
import { diffFields, isoNow, type StoreContext } from '../kernel/context.js'
import { type Db, onUniqueViolation } from '../kernel/db.js'
import {
  type ErrorDetail,
  ResourceConflictError,
  ResourceNotFoundError,
  StoreError,
  ValidationError,
} from '../kernel/errors.js'
import { uuidv7 } from '../kernel/ids.js'
import { type Page, type PageInput, resolvePage } from '../kernel/pagination.js'
import { boundedString, parseBody } from '../kernel/validation.js'
import { attributeDefinitions, users } from '../tables.js'
import { coerceValue } from './attribute-values.js'

/** An attribute definition (docs/resources.md#attribute-definitions). */
export interface AttributeDefinitionRecord {
  id: string
  key: string
  entity_type: string
  display_name: string
  value_type: string
  default_value: unknown
  allowed_values: unknown[] | null
  description: string | null
  created_by: string | null
  updated_by: string | null
  created_at: string
  updated_at: string
}

/** Body of `POST /attribute-definitions`. */
export interface CreateAttributeInput {
  key: string
  entity_type: string
  value_type: string
  display_name?: string | null
  default_value?: unknown
  allowed_values?: unknown[] | null
  description?: string | null
}

/** Keys a `user` definition may not use: built-in template names (docs/resources.md#attribute-definitions). */
export const RESERVED_USER_KEYS = ['id', 'username', 'user_id', 'roles'] as const

const entityTypes = ['user', 'table', 'column'] as const
const valueTypes = ['string', 'integer', 'boolean', 'list'] as const
export const createAttributeSchema = v.object({
  key: v.pipe(
    boundedString(1, 64),
    v.regex(/^[A-Za-z][A-Za-z0-9_]*$/, 'must match [A-Za-z][A-Za-z0-9_]*'),
  ),
  entity_type: v.picklist(entityTypes, 'expected user, table or column'),
  value_type: v.picklist(valueTypes, 'expected string, integer, boolean or list'),
  display_name: v.nullish(boundedString(1, 100)),
  default_value: v.optional(v.unknown()),
  allowed_values: v.nullish(
    v.pipe(v.array(v.unknown(), 'expected an array'), v.maxLength(1000, 'at most 1000 values')),
  ),
  description: v.nullish(boundedString(0, 1000)),
})
export const updateAttributeSchema = v.partial(
  v.omit(createAttributeSchema, ['key', 'entity_type']),
)

type Row = typeof attributeDefinitions.$inferSelect

function toRecord(row: Row): AttributeDefinitionRecord {
  return {
    id: row.id,
    key: row.key,
    entity_type: row.entityType,
    display_name: row.displayName,
    value_type: row.valueType,
    default_value: row.defaultValue ?? null,
    allowed_values: row.allowedValues ?? null,
    description: row.description,
    created_by: row.createdBy,
    updated_by: row.updatedBy,
    created_at: isoNow(row.createdAt),
    updated_at: isoNow(row.updatedAt),
  }
}

const snapshot = (r: AttributeDefinitionRecord) => ({
  key: r.key,
  entity_type: r.entity_type,
  display_name: r.display_name,
  value_type: r.value_type,
  default_value: r.default_value,
  allowed_values: r.allowed_values,
  description: r.description,
})

/** Checks `allowed_values` and `default_value` against the value type; returns native forms. */
function checkRule(
  valueType: string,
  allowedInput: unknown[] | null | undefined,
  defaultInput: unknown,
): { allowed: unknown[] | null; defaultValue: unknown; details: ErrorDetail[] } {
  const details: ErrorDetail[] = []
  const elementType = valueType === 'list' ? 'string' : valueType
  const allowed: unknown[] = []
  for (const [i, raw] of (allowedInput ?? []).entries()) {
    const r = coerceValue({ valueType: elementType, allowedValues: null }, raw)
    if (!r.ok) details.push({ field: `allowed_values[${i}]`, code: r.code, message: r.message })
    else if (allowed.includes(r.value)) {
      details.push({ field: `allowed_values[${i}]`, code: 'duplicate', message: 'duplicate value' })
    } else allowed.push(r.value)
  }
  let defaultValue: unknown = null
  if (defaultInput !== null && defaultInput !== undefined) {
    const r = coerceValue({ valueType, allowedValues: allowed }, defaultInput, {
      listAsJsonString: true,
    })
    if (r.ok) defaultValue = r.value
    else details.push({ field: 'default_value', code: r.code, message: r.message })
  }
  return { allowed: allowed.length > 0 ? allowed : null, defaultValue, details }
}

async function requireDefinition(db: Db, id: string): Promise<Row> {
  const [row] = await db.select().from(attributeDefinitions).where(eq(attributeDefinitions.id, id))
  if (!row) throw new ResourceNotFoundError('attribute definition')
  return row
}

/** Users holding a value for `key`. */
async function holders(
  db: Db,
  key: string,
): Promise<{ id: string; attributes: Record<string, unknown> }[]> {
  return db
    .select({ id: users.id, attributes: users.attributes })
    .from(users)
    .where(sql`${users.attributes} ? ${key}`)
    .orderBy(asc(users.id))
}

/** Attribute definitions (docs/resources.md#attribute-definitions). */
export class AttributesService {
  readonly #ctx: StoreContext

  constructor(ctx: StoreContext) {
    this.#ctx = ctx
  }

  /** Creates a definition; 422 (reserved keys for `user`), 409 already_exists. */
  async create(input: CreateAttributeInput, actorId: string): Promise<AttributeDefinitionRecord> {
    const body = parseBody(createAttributeSchema, input)
    if (
      body.entity_type === 'user' &&
      (RESERVED_USER_KEYS as readonly string[]).includes(body.key)
    ) {
      throw new ValidationError([
        { field: 'key', code: 'reserved', message: `${body.key} is a reserved user attribute key` },
      ])
    }
    const rule = checkRule(body.value_type, body.allowed_values, body.default_value)
    if (rule.details.length > 0) throw new ValidationError(rule.details)
    return this.#ctx.mutate(actorId, async (m) => {
      const [row] = await onUniqueViolation(
        () =>
          m.tx
            .insert(attributeDefinitions)
            .values({
              id: uuidv7(),
              key: body.key,
              entityType: body.entity_type,
              displayName: body.display_name ?? body.key,
              valueType: body.value_type,
              defaultValue: rule.defaultValue,
              allowedValues: rule.allowed,
              description: body.description ?? null,
              createdBy: actorId,
              updatedBy: actorId,
              createdAt: m.now,
              updatedAt: m.now,
            })
            .returning(),
        () => new ResourceConflictError('attribute definition already exists', 'key'),
      )
      const record = toRecord(row as Row)
      m.audit('attribute_definition', record.id, 'create', { after: snapshot(record) })
      if (record.entity_type === 'user') m.invalidate({ type: 'everyone' })
      return record
    })
  }

  /** One definition; 404 when unknown. */
  async get(id: string): Promise<AttributeDefinitionRecord> {
    return toRecord(await requireDefinition(this.#ctx.db, id))
  }

  /** Paginated definitions by key. */
  async list(
    input: PageInput & { entity_type?: string | undefined; search?: string | undefined } = {},
  ): Promise<Page<AttributeDefinitionRecord>> {
    const { page, pageSize, offset } = resolvePage(input, { size: 50, cap: 200 })
    const pattern = `%${(input.search ?? '').replace(/[\\%_]/g, '\\$&')}%`
    const where = and(
      input.entity_type ? eq(attributeDefinitions.entityType, input.entity_type) : undefined,
      input.search
        ? or(
            ilike(attributeDefinitions.key, pattern),
            ilike(attributeDefinitions.displayName, pattern),
          )
        : undefined,
    )
    const db = this.#ctx.db
    const rows = await db
      .select()
      .from(attributeDefinitions)
      .where(where)
      .orderBy(asc(attributeDefinitions.key), asc(attributeDefinitions.id))
      .limit(pageSize)
      .offset(offset)
    const [total] = await db.select({ n: count() }).from(attributeDefinitions).where(where)
    return { data: rows.map(toRecord), total: total?.n ?? 0, page, page_size: pageSize }
  }

  /** Partial update; 422 immutable key/entity_type; 409 incompatible_values. */
  async update(
    id: string,
    input: Partial<CreateAttributeInput>,
    actorId: string,
  ): Promise<AttributeDefinitionRecord> {
    return this.#ctx.mutate(actorId, async (m) => {
      const row = await requireDefinition(m.tx, id)
      const raw = (input ?? {}) as Record<string, unknown>
      const immutable: ErrorDetail[] = []
      if (raw['key'] !== undefined && raw['key'] !== row.key) {
        immutable.push({ field: 'key', code: 'immutable', message: 'key cannot change' })
      }
      if (raw['entity_type'] !== undefined && raw['entity_type'] !== row.entityType) {
        immutable.push({
          field: 'entity_type',
          code: 'immutable',
          message: 'entity_type cannot change',
        })
      }
      const body = parseBody(updateAttributeSchema, input)
      if (immutable.length > 0) throw new ValidationError(immutable)
      for (const key of ['display_name', 'value_type'] as const) {
        if (raw[key] === null) {
          throw new ValidationError([
            { field: key, code: 'invalid_type', message: `${key} cannot be null` },
          ])
        }
      }
      const valueType = body.value_type ?? row.valueType
      const rule = checkRule(
        valueType,
        body.allowed_values === undefined ? row.allowedValues : body.allowed_values,
        body.default_value === undefined ? row.defaultValue : body.default_value,
      )
      if (rule.details.length > 0) throw new ValidationError(rule.details)
      const before = toRecord(row)
      const next = {
        ...before,
        display_name: body.display_name ?? row.displayName,
        value_type: valueType,
        default_value: rule.defaultValue,
        allowed_values: rule.allowed,
        description: body.description === undefined ? row.description : body.description,
      }
      const diff = diffFields(snapshot(before), snapshot(next))
      if (!diff) {
        m.noop()
        return before
      }
      if (row.entityType === 'user') await this.#convertValues(m.tx, row.key, next)
      const [updated] = await m.tx
        .update(attributeDefinitions)
        .set({
          displayName: next.display_name,
          valueType: next.value_type,
          defaultValue: next.default_value,
          allowedValues: next.allowed_values,
          description: next.description,
          updatedBy: actorId,
          updatedAt: m.now,
        })
        .where(eq(attributeDefinitions.id, id))
        .returning()
      m.audit('attribute_definition', id, 'update', diff)
      const runtime = ['value_type', 'default_value', 'allowed_values']
      if (row.entityType === 'user' && runtime.some((k) => k in diff.after)) {
        m.invalidate({ type: 'everyone' })
      }
      return toRecord(updated as Row)
    })
  }

  /** Re-types stored values under the new rule, or 409 incompatible_values listing users. */
  async #convertValues(
    tx: Db,
    key: string,
    next: { value_type: string; allowed_values: unknown[] | null },
  ): Promise<void> {
    const bad: string[] = []
    const converted: { id: string; attributes: Record<string, unknown> }[] = []
    for (const u of await holders(tx, key)) {
      const r = coerceValue(
        { valueType: next.value_type, allowedValues: next.allowed_values },
        u.attributes[key],
      )
      if (!r.ok) bad.push(u.id)
      else if (JSON.stringify(r.value) !== JSON.stringify(u.attributes[key])) {
        converted.push({ id: u.id, attributes: { ...u.attributes, [key]: r.value } })
      }
    }
    if (bad.length > 0) {
      throw new StoreError(
        'incompatible_values',
        `${bad.length} users hold values that the new definition rejects`,
        bad.slice(0, 20).map((id) => ({
          field: 'user_id',
          code: 'not_in_allowed_values',
          message: id,
        })),
      )
    }
    for (const c of converted) {
      await tx.update(users).set({ attributes: c.attributes }).where(eq(users.id, c.id))
    }
  }

  /** Deletes a definition; 409 in_use while users hold values unless `force`. */
  async delete(id: string, options: { force?: boolean }, actorId: string): Promise<void> {
    await this.#ctx.mutate(actorId, async (m) => {
      const row = await requireDefinition(m.tx, id)
      const affected = row.entityType === 'user' ? await holders(m.tx, row.key) : []
      if (affected.length > 0 && !options.force) {
        throw new StoreError('in_use', `${affected.length} users hold a value for ${row.key}`)
      }
      for (const u of affected) {
        const { [row.key]: _removed, ...rest } = u.attributes
        await m.tx.update(users).set({ attributes: rest }).where(eq(users.id, u.id))
      }
      await m.tx.delete(attributeDefinitions).where(eq(attributeDefinitions.id, id))
      m.audit('attribute_definition', id, 'delete', {
        before: { ...snapshot(toRecord(row)), affected_user_ids: affected.map((u) => u.id) },
      })
      if (row.entityType === 'user') m.invalidate({ type: 'everyone' })
    })
  }
}
