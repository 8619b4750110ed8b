import { and, asc, count, eq, ilike, inArray, ne, or, sql } from 'drizzle-orm'
import * as v from 'valibot'
import { validateUserAttributes } from '../attributes/attribute-values.js'
import { diffFields, iso, isoNow, type StoreContext } from '../kernel/context.js'
import type { Db } from '../kernel/db.js'
import { onUniqueViolation } from '../kernel/db.js'
import {
  ResourceConflictError,
  ResourceNotFoundError,
  StoreError,
  ValidationError,
} from '../kernel/errors.js'
import { uuidv7 } from '../kernel/ids.js'
import {
  effectiveLimitsView,
  type Limits,
  normalizeLimits,
  patchLimits,
  storedLimits,
  tightestLimits,
} from '../kernel/limits.js'
import type { Mutation } from '../kernel/mutation.js'
import { type Page, type PageInput, resolvePage } from '../kernel/pagination.js'
import { resolveUserRoles } from '../kernel/role-graph.js'
import { parseBody, rejectFields } from '../kernel/validation.js'
import { removeAssignments } from '../policies/assignment-cascade.js'
import {
  attributeDefinitions,
  datasourceAccess,
  policyAssignments,
  roleMembers,
  roles,
  users,
} from '../tables.js'
import {
  createScramVerifier,
  fakeScramVerifier,
  formatScramVerifier,
  parseScramVerifier,
  type ScramVerifier,
  verifyScramPassword,
} from './scram.js'
import { createUserSchema, passwordSchema, updateUserSchema } from './user-schemas.js'

/** A user as the admin API returns it (docs/resources.md#users); never the verifier. */
export interface User {
  id: string
  username: string
  is_admin: boolean
  is_active: boolean
  email: string | null
  display_name: string | null
  attributes: Record<string, unknown>
  /** The user's own limits (docs/roles-and-access.md#limits); null: none of its own. */
  limits: Limits | null
  last_login_at: string | null
  password_changed_at: string
  created_at: string
  updated_at: string
}

/** Body of `POST /users`. */
export interface CreateUserInput {
  username: string
  password: string
  is_admin?: boolean | null
  is_active?: boolean | null
  email?: string | null
  display_name?: string | null
  attributes?: Record<string, unknown> | null
  /** Row and rate limits; null clears them (docs/roles-and-access.md#limits). */
  limits?: Limits | null
}

/** Body of `PUT`/`PATCH /users/{id}`: every field optional. */
export type UpdateUserInput = Partial<Omit<CreateUserInput, 'password'>>

/** What the data plane needs to run a SCRAM exchange for a username. */
export interface AuthInfo extends ScramVerifier {
  /** False for unknown or inactive users; the verifier is then a deterministic fake. */
  exists: boolean
  userId: string | null
  /** For the login audit only (clients see one answer): why a login as this name must fail. */
  refusal: 'unknown_user' | 'inactive_user' | null
}

/** The outcome of a clear-text password check; `reason` is for the login audit only. */
export type PasswordCheck =
  | { user: User; reason: null }
  | { user: null; reason: 'unknown_user' | 'inactive_user' | 'wrong_password' }

type UserRow = typeof users.$inferSelect

/** Maps a row to the API object. */
export function toUser(row: UserRow): User {
  return {
    id: row.id,
    username: row.username,
    is_admin: row.isAdmin,
    is_active: row.isActive,
    email: row.email,
    display_name: row.displayName,
    attributes: row.attributes,
    limits: storedLimits(row.limits),
    last_login_at: iso(row.lastLoginAt),
    password_changed_at: isoNow(row.passwordChangedAt),
    created_at: isoNow(row.createdAt),
    updated_at: isoNow(row.updatedAt),
  }
}

function snapshot(u: User): Record<string, unknown> {
  return {
    username: u.username,
    is_admin: u.is_admin,
    is_active: u.is_active,
    email: u.email,
    display_name: u.display_name,
    attributes: u.attributes,
    limits: u.limits,
  }
}

async function userRules(db: Db) {
  const defs = await db
    .select()
    .from(attributeDefinitions)
    .where(eq(attributeDefinitions.entityType, 'user'))
  return new Map(
    defs.map((d) => [d.key, { valueType: d.valueType, allowedValues: d.allowedValues ?? null }]),
  )
}

async function requireUser(db: Db, id: string, lock = false): Promise<UserRow> {
  const query = db.select().from(users).where(eq(users.id, id))
  const [row] = lock ? await query.for('update') : await query
  if (!row) throw new ResourceNotFoundError('user')
  return row
}

async function otherActiveAdmins(db: Db, id: string): Promise<number> {
  const [row] = await db
    .select({ n: count() })
    .from(users)
    .where(and(eq(users.isAdmin, true), eq(users.isActive, true), ne(users.id, id)))
  return row?.n ?? 0
}

/** Users, their passwords (as SCRAM verifiers) and attribute values (docs/resources.md#users). */
export class UsersService {
  readonly #ctx: StoreContext

  constructor(ctx: StoreContext) {
    this.#ctx = ctx
  }

  /** Creates a user (docs/resources.md#users); 422, 409 already_exists. */
  async create(input: CreateUserInput, actorId: string): Promise<User> {
    const body = parseBody(createUserSchema, input)
    const limits = normalizeLimits(body.limits ?? null)
    const verifier = formatScramVerifier(await createScramVerifier(body.password))
    return this.#ctx.mutate(actorId, async (m) => {
      const attrs = validateUserAttributes(await userRules(m.tx), body.attributes ?? {})
      if (attrs.details.length > 0) throw new ValidationError(attrs.details)
      const [row] = await onUniqueViolation(
        () =>
          m.tx
            .insert(users)
            .values({
              id: uuidv7(),
              username: body.username,
              scramVerifier: verifier,
              isAdmin: body.is_admin ?? false,
              isActive: body.is_active ?? true,
              email: body.email ?? null,
              displayName: body.display_name ?? null,
              attributes: attrs.value,
              limits,
              passwordChangedAt: m.now,
              createdBy: actorId,
              updatedBy: actorId,
              createdAt: m.now,
              updatedAt: m.now,
            })
            .returning(),
        () => new ResourceConflictError('username already exists', 'username'),
      )
      const user = toUser(row as UserRow)
      m.audit('user', user.id, 'create', { after: snapshot(user) })
      return user
    })
  }

  /** One user; 404 when unknown. */
  async get(id: string): Promise<User> {
    return toUser(await requireUser(this.#ctx.db, id))
  }

  /**
   * The limits the data plane applies to the user (docs/roles-and-access.md#limits): the
   * tightest of their own and those of every active role reaching them; null where none is set.
   */
  async effectiveLimits(id: string): Promise<Required<Limits>> {
    const db = this.#ctx.db
    const row = await requireUser(db, id)
    const reached = await resolveUserRoles(db, id)
    const roleLimits =
      reached.length === 0
        ? []
        : await db
            .select({ limits: roles.limits })
            .from(roles)
            .where(
              inArray(
                roles.id,
                reached.map((r) => r.id),
              ),
            )
    return effectiveLimitsView(
      tightestLimits([storedLimits(row.limits), ...roleLimits.map((r) => storedLimits(r.limits))]),
    )
  }

  /** A user by exact username, or null. */
  async findByUsername(username: string): Promise<User | null> {
    const [row] = await this.#ctx.db.select().from(users).where(eq(users.username, username))
    return row ? toUser(row) : null
  }

  /** Paginated users, oldest first; `search` matches username, email and display name. */
  async list(input: PageInput & { search?: string | undefined } = {}): Promise<Page<User>> {
    const { page, pageSize, offset } = resolvePage(input, { size: 20, cap: 100 })
    const pattern = `%${(input.search ?? '').replace(/[\\%_]/g, '\\$&')}%`
    const where = input.search
      ? or(
          ilike(users.username, pattern),
          ilike(users.email, pattern),
          ilike(users.displayName, pattern),
        )
      : undefined
    const db = this.#ctx.db
    const [rows, [total]] = await Promise.all([
      db
        .select()
        .from(users)
        .where(where)
        .orderBy(asc(users.createdAt), asc(users.id))
        .limit(pageSize)
        .offset(offset),
      db.select({ n: count() }).from(users).where(where),
    ])
    return { data: rows.map(toUser), total: total?.n ?? 0, page, page_size: pageSize }
  }

  /** Partial update (docs/resources.md#users): 404; 422; 409 admin_lockout; 409 already_exists. */
  async update(id: string, input: UpdateUserInput, actorId: string): Promise<User> {
    return this.#ctx.mutate(actorId, async (m) => {
      const row = await requireUser(m.tx, id, true)
      rejectFields(input, ['password'])
      const body = parseBody(updateUserSchema, input)
      for (const key of ['username', 'is_admin', 'is_active'] as const) {
        if (input && (input as Record<string, unknown>)[key] === null) {
          throw new ValidationError([
            { field: key, code: 'invalid_type', message: `${key} cannot be null` },
          ])
        }
      }
      let attributes = row.attributes
      if (body.attributes !== undefined) {
        const attrs = validateUserAttributes(await userRules(m.tx), body.attributes ?? {})
        if (attrs.details.length > 0) throw new ValidationError(attrs.details)
        attributes = attrs.value
      }
      const next = {
        username: body.username ?? row.username,
        isAdmin: body.is_admin ?? row.isAdmin,
        isActive: body.is_active ?? row.isActive,
        email: body.email === undefined ? row.email : body.email,
        displayName: body.display_name === undefined ? row.displayName : body.display_name,
        attributes,
        limits: patchLimits(storedLimits(row.limits), body.limits),
      }
      const losesAdmin = row.isAdmin && row.isActive && (!next.isAdmin || !next.isActive)
      if (losesAdmin && (id === actorId || (await otherActiveAdmins(m.tx, id)) === 0)) {
        throw new StoreError('admin_lockout', 'the change would remove the last admin access')
      }
      const before = toUser(row)
      const diff = diffFields(snapshot(before), {
        username: next.username,
        is_admin: next.isAdmin,
        is_active: next.isActive,
        email: next.email,
        display_name: next.displayName,
        attributes: next.attributes,
        limits: next.limits,
      })
      if (!diff) {
        m.noop()
        return before
      }
      const [updated] = await onUniqueViolation(
        () =>
          m.tx
            .update(users)
            .set({ ...next, updatedBy: actorId, updatedAt: m.now })
            .where(eq(users.id, id))
            .returning(),
        () => new ResourceConflictError('username already exists', 'username'),
      )
      m.audit('user', id, 'update', diff)
      if (['username', 'is_active', 'attributes', 'limits'].some((k) => k in diff.after)) {
        m.invalidate({ type: 'user', userIds: [id] })
      }
      return toUser(updated as UserRow)
    })
  }

  /** Sets a new password (docs/resources.md#users); audited with `password_changed: true`. */
  async setPassword(id: string, input: { password: string }, actorId: string): Promise<User> {
    return this.#ctx.mutate(actorId, async (m) => {
      const row = await requireUser(m.tx, id, true)
      const body = parseBody(v.object({ password: passwordSchema }), input)
      const verifier = formatScramVerifier(await createScramVerifier(body.password))
      const [updated] = await m.tx
        .update(users)
        .set({
          scramVerifier: verifier,
          passwordChangedAt: m.now,
          updatedBy: actorId,
          updatedAt: m.now,
        })
        .where(eq(users.id, id))
        .returning()
      m.audit('user', id, 'update', {
        before: { password_changed_at: isoNow(row.passwordChangedAt) },
        after: { password_changed_at: isoNow(m.now) },
        password_changed: true,
      })
      return toUser(updated as UserRow)
    })
  }

  /** Deletes a user and its memberships, access rows and assignments (docs/resources.md#users). */
  async delete(id: string, actorId: string): Promise<void> {
    await this.#ctx.mutate(actorId, async (m) => {
      const row = await requireUser(m.tx, id, true)
      if (id === actorId) throw new StoreError('admin_lockout', 'admins cannot delete themselves')
      if (row.isAdmin && row.isActive && (await otherActiveAdmins(m.tx, id)) === 0) {
        throw new StoreError('admin_lockout', 'the change would leave no admin')
      }
      await this.#cascade(m, id)
      const roleIds = await m.tx
        .delete(roleMembers)
        .where(eq(roleMembers.userId, id))
        .returning({ id: roleMembers.roleId })
      const access = await m.tx
        .delete(datasourceAccess)
        .where(and(eq(datasourceAccess.userId, id), eq(datasourceAccess.scope, 'user')))
        .returning({ id: datasourceAccess.datasourceId })
      await m.tx.delete(users).where(eq(users.id, id))
      m.audit('user', id, 'delete', {
        before: {
          ...snapshot(toUser(row)),
          role_ids: roleIds.map((r) => r.id).sort(),
          datasource_ids: access.map((r) => r.id).sort(),
        },
      })
      m.invalidate({ type: 'user', userIds: [id] })
    })
  }

  async #cascade(m: Mutation, userId: string): Promise<void> {
    const rows = await m.tx
      .select()
      .from(policyAssignments)
      .where(and(eq(policyAssignments.userId, userId), eq(policyAssignments.scope, 'user')))
    await removeAssignments(m, rows, 'user_deleted')
  }

  /** SCRAM verifier parts for the data plane; a deterministic fake for unknown or inactive users. */
  async getUserForAuth(username: string): Promise<AuthInfo> {
    const [row] = await this.#ctx.db
      .select({ id: users.id, isActive: users.isActive, verifier: users.scramVerifier })
      .from(users)
      .where(eq(users.username, username))
    const parsed = row?.isActive ? parseScramVerifier(row.verifier) : null
    if (row && parsed) return { ...parsed, exists: true, userId: row.id, refusal: null }
    const fake = fakeScramVerifier(username, this.#ctx.secrets.derive('scram-fake'))
    return {
      ...fake,
      exists: false,
      userId: null,
      refusal: row ? 'inactive_user' : 'unknown_user',
    }
  }

  /** Checks a clear-text password; unknown, inactive and wrong all return null. */
  async verifyPassword(username: string, password: string): Promise<User | null> {
    return (await this.checkPassword(username, password)).user
  }

  /** Checks a clear-text password, saying why it failed (for the login audit, never the client). */
  async checkPassword(username: string, password: string): Promise<PasswordCheck> {
    const [row] = await this.#ctx.db.select().from(users).where(eq(users.username, username))
    const verifier = row?.isActive ? parseScramVerifier(row.scramVerifier) : null
    if (!row || !verifier) {
      // Same cost as a real check, so timing does not reveal unknown users.
      await verifyScramPassword(
        password,
        fakeScramVerifier(username, this.#ctx.secrets.derive('x')),
      )
      return { user: null, reason: row ? 'inactive_user' : 'unknown_user' }
    }
    return (await verifyScramPassword(password, verifier))
      ? { user: toUser(row), reason: null }
      : { user: null, reason: 'wrong_password' }
  }

  /** Sets `last_login_at` after an admin login or data-plane connection (not audited). */
  async recordLogin(id: string): Promise<void> {
    await this.#ctx.db.update(users).set({ lastLoginAt: sql`now()` }).where(eq(users.id, id))
  }
}
