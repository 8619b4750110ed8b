import { and, asc, count, eq, ilike, inArray, isNotNull } from 'drizzle-orm'
import { isoNow, type StoreContext } from '../kernel/context.js'
import { type Db, onUniqueViolation } from '../kernel/db.js'
import type { ErrorDetail } from '../kernel/errors.js'
import { ResourceConflictError, ResourceNotFoundError, ValidationError } from '../kernel/errors.js'
import { uuidv7 } from '../kernel/ids.js'
import type { Mutation } from '../kernel/mutation.js'
import { type Page, type PageInput, resolvePage } from '../kernel/pagination.js'
import { parseBody } from '../kernel/validation.js'
import { attributeDefinitions, roleMembers, roles } from '../tables.js'
import { type AdminSignIn, adminSignInWithClaims } from './admin-sign-in.js'
import { type ClaimSignIn, signInWithClaims } from './claim-sign-in.js'
import {
  type CreateIdentityProviderInput,
  createIdentityProviderSchema,
  updateIdentityProviderSchema,
} from './identity-provider-schemas.js'
import {
  type AdminClaim,
  type AttributeMapping,
  identityProviders,
  type RoleMapping,
} from './identity-providers-tables.js'
import { UserIdentityLinks } from './user-identity-links.js'

/** An identity provider as the admin API returns it (docs/sso.md); the client secret never appears. */
export interface IdentityProvider {
  id: string
  name: string
  issuer: string
  client_id: string
  client_secret_set: boolean
  audiences: string[]
  username_claim: string | null
  role_claim: string
  attribute_mappings: AttributeMapping[]
  role_mappings: RoleMapping[]
  jit_users: boolean
  is_active: boolean
  console_sign_in: boolean
  admin_claim: AdminClaim | null
  created_at: string
  updated_at: string
}

type Row = typeof identityProviders.$inferSelect

function toProvider(row: Row): IdentityProvider {
  return {
    id: row.id,
    name: row.name,
    issuer: row.issuer,
    client_id: row.clientId,
    client_secret_set: row.secret !== null,
    audiences: row.audiences,
    username_claim: row.usernameClaim,
    role_claim: row.roleClaim,
    attribute_mappings: row.attributeMappings,
    role_mappings: row.roleMappings,
    jit_users: row.jitUsers,
    is_active: row.isActive,
    console_sign_in: row.consoleSignIn,
    admin_claim: row.adminClaim ?? null,
    created_at: isoNow(row.createdAt),
    updated_at: isoNow(row.updatedAt),
  }
}

/** The audited fields: everything but ids, timestamps and the secret. */
function snapshot(p: IdentityProvider): Record<string, unknown> {
  const { id: _id, created_at: _c, updated_at: _u, client_secret_set: _s, ...rest } = p
  return rest
}

async function requireProvider(db: Db, id: string, lock = false): Promise<Row> {
  const query = db.select().from(identityProviders).where(eq(identityProviders.id, id))
  const [row] = lock ? await query.for('update') : await query
  if (!row) throw new ResourceNotFoundError('identity provider')
  return row
}

/**
 * Checks the mappings against the store (docs/sso.md): every attribute is a user attribute
 * definition, mapped once; every role exists.
 */
async function checkMappings(
  db: Db,
  attributes: readonly AttributeMapping[],
  roleMappings: readonly RoleMapping[],
): Promise<void> {
  const details: ErrorDetail[] = []
  const keys = attributes.map((a) => a.attribute)
  const defs = keys.length
    ? await db
        .select({ key: attributeDefinitions.key })
        .from(attributeDefinitions)
        .where(
          and(eq(attributeDefinitions.entityType, 'user'), inArray(attributeDefinitions.key, keys)),
        )
    : []
  const known = new Set(defs.map((d) => d.key))
  const seen = new Set<string>()
  attributes.forEach((a, i) => {
    const field = `attribute_mappings[${i}].attribute`
    if (!known.has(a.attribute)) {
      details.push({ field, code: 'unknown_attribute', message: 'no user attribute definition' })
    } else if (seen.has(a.attribute)) {
      details.push({ field, code: 'duplicate', message: 'attribute mapped twice' })
    }
    seen.add(a.attribute)
  })
  const roleIds = [...new Set(roleMappings.map((r) => r.role_id))]
  const found = roleIds.length
    ? await db.select({ id: roles.id }).from(roles).where(inArray(roles.id, roleIds))
    : []
  const existing = new Set(found.map((r) => r.id))
  roleMappings.forEach((r, i) => {
    if (!existing.has(r.role_id)) {
      details.push({
        field: `role_mappings[${i}].role_id`,
        code: 'not_found',
        message: 'no such role',
      })
    }
  })
  if (details.length > 0) throw new ValidationError(details)
}

/** Console sign-in needs an admin claim: the token alone never makes anyone an admin. */
function checkConsoleSignIn(enabled: boolean, adminClaim: AdminClaim | null): void {
  if (!enabled || adminClaim) return
  throw new ValidationError([
    {
      field: 'admin_claim',
      code: 'required',
      message: 'console sign-in needs an admin claim (which claim value makes a user an admin)',
    },
  ])
}

/** OpenID Connect providers whose tokens log users in on the data plane (docs/sso.md). */
export class IdentityProvidersService {
  readonly #ctx: StoreContext
  /** Users linked to provider subjects by an admin (user-identity-links.ts). */
  readonly links: UserIdentityLinks

  constructor(ctx: StoreContext) {
    this.#ctx = ctx
    this.links = new UserIdentityLinks(ctx)
  }

  /** Creates a provider; 422, 409 already_exists (name or issuer). */
  async create(input: CreateIdentityProviderInput, actorId: string): Promise<IdentityProvider> {
    const body = parseBody(createIdentityProviderSchema, input)
    return this.#ctx.mutate(actorId, async (m) => {
      await checkMappings(m.tx, body.attribute_mappings ?? [], body.role_mappings ?? [])
      checkConsoleSignIn(body.console_sign_in ?? false, body.admin_claim ?? null)
      const [row] = await onUniqueViolation(
        () =>
          m.tx
            .insert(identityProviders)
            .values({
              id: uuidv7(),
              name: body.name,
              issuer: body.issuer,
              clientId: body.client_id,
              secret: body.client_secret ? this.#ctx.secrets.seal(body.client_secret) : null,
              audiences: body.audiences ?? [],
              usernameClaim: body.username_claim ?? null,
              roleClaim: body.role_claim ?? 'groups',
              attributeMappings: body.attribute_mappings ?? [],
              roleMappings: body.role_mappings ?? [],
              jitUsers: body.jit_users ?? false,
              isActive: body.is_active ?? true,
              consoleSignIn: body.console_sign_in ?? false,
              adminClaim: body.admin_claim ?? null,
              createdBy: actorId,
              updatedBy: actorId,
              createdAt: m.now,
              updatedAt: m.now,
            })
            .returning(),
        () => new ResourceConflictError('identity provider name or issuer already exists'),
      )
      const provider = toProvider(row as Row)
      m.audit('identity_provider', provider.id, 'create', { after: snapshot(provider) })
      return provider
    })
  }

  /** One provider; 404 when unknown. */
  async get(id: string): Promise<IdentityProvider> {
    return toProvider(await requireProvider(this.#ctx.db, id))
  }

  /** Paginated providers, oldest first; `search` matches the name. */
  async list(
    input: PageInput & { search?: string | undefined } = {},
  ): Promise<Page<IdentityProvider>> {
    const { page, pageSize, offset } = resolvePage(input, { size: 20, cap: 100 })
    const where = input.search
      ? ilike(identityProviders.name, `%${input.search.replace(/[\\%_]/g, '\\$&')}%`)
      : undefined
    const db = this.#ctx.db
    const [rows, [total]] = await Promise.all([
      db
        .select()
        .from(identityProviders)
        .where(where)
        .orderBy(asc(identityProviders.createdAt), asc(identityProviders.id))
        .limit(pageSize)
        .offset(offset),
      db.select({ n: count() }).from(identityProviders).where(where),
    ])
    return { data: rows.map(toProvider), total: total?.n ?? 0, page, page_size: pageSize }
  }

  /** The active provider with this exact issuer, or null (token logins). */
  async findActiveByIssuer(issuer: string): Promise<IdentityProvider | null> {
    const [row] = await this.#ctx.db
      .select()
      .from(identityProviders)
      .where(and(eq(identityProviders.issuer, issuer), eq(identityProviders.isActive, true)))
    return row ? toProvider(row) : null
  }

  /**
   * Finds or provisions the user a verified token names and refreshes their mapped attributes
   * and roles (claim-sign-in.ts); the refusal reason is for the login audit only.
   */
  signIn(
    provider: IdentityProvider,
    username: string,
    claims: Readonly<Record<string, unknown>>,
  ): Promise<ClaimSignIn> {
    return signInWithClaims(this.#ctx, provider, username, claims)
  }

  /**
   * Signs an admin in to the console with an ID token's verified claims (admin-sign-in.ts): the
   * provider's admin claim decides; the refusal reason is for the login audit only.
   */
  adminSignIn(
    provider: IdentityProvider,
    claims: Readonly<Record<string, unknown>>,
  ): Promise<AdminSignIn> {
    return adminSignInWithClaims(this.#ctx, provider, claims)
  }

  /** The provider's client secret in clear, for the console's code exchange only; never returned. */
  async clientSecretOf(id: string): Promise<string | null> {
    const row = await requireProvider(this.#ctx.db, id)
    return row.secret === null ? null : this.#ctx.secrets.open(row.secret)
  }

  /** The active providers offered on the console's sign-in page, by name. */
  async listConsoleSignIn(): Promise<IdentityProvider[]> {
    const rows = await this.#ctx.db
      .select()
      .from(identityProviders)
      .where(and(eq(identityProviders.isActive, true), eq(identityProviders.consoleSignIn, true)))
      .orderBy(asc(identityProviders.name))
    return rows.map(toProvider)
  }

  /** Whether any provider is active: token logins are only looked for then. */
  async anyActive(): Promise<boolean> {
    const [row] = await this.#ctx.db
      .select({ n: count() })
      .from(identityProviders)
      .where(eq(identityProviders.isActive, true))
    return (row?.n ?? 0) > 0
  }

  /** Partial update; arrays replace whole; the secret merges like a datasource password. */
  async update(
    id: string,
    input: Partial<CreateIdentityProviderInput>,
    actorId: string,
  ): Promise<IdentityProvider> {
    return this.#ctx.mutate(actorId, async (m) => {
      const row = await requireProvider(m.tx, id, true)
      const body = parseBody(updateIdentityProviderSchema, input)
      const notNull = [
        'name',
        'issuer',
        'client_id',
        'role_claim',
        'jit_users',
        'is_active',
        'console_sign_in',
      ]
      for (const key of notNull) {
        if (input && (input as Record<string, unknown>)[key] === null) {
          throw new ValidationError([
            { field: key, code: 'invalid_type', message: `${key} cannot be null` },
          ])
        }
      }
      const attributeMappings =
        body.attribute_mappings === undefined
          ? row.attributeMappings
          : (body.attribute_mappings ?? [])
      const roleMappings =
        body.role_mappings === undefined ? row.roleMappings : (body.role_mappings ?? [])
      await checkMappings(m.tx, attributeMappings, roleMappings)
      let secret = row.secret
      if (body.client_secret === null) secret = null
      else if (body.client_secret) {
        const same =
          row.secret !== null && this.#ctx.secrets.open(row.secret) === body.client_secret
        if (!same) secret = this.#ctx.secrets.seal(body.client_secret)
      }
      const next: Row = {
        ...row,
        name: body.name ?? row.name,
        issuer: body.issuer ?? row.issuer,
        clientId: body.client_id ?? row.clientId,
        audiences: body.audiences === undefined ? row.audiences : (body.audiences ?? []),
        usernameClaim: body.username_claim === undefined ? row.usernameClaim : body.username_claim,
        roleClaim: body.role_claim ?? row.roleClaim,
        attributeMappings,
        roleMappings,
        jitUsers: body.jit_users ?? row.jitUsers,
        isActive: body.is_active ?? row.isActive,
        consoleSignIn: body.console_sign_in ?? row.consoleSignIn,
        adminClaim: body.admin_claim === undefined ? row.adminClaim : body.admin_claim,
        secret,
      }
      checkConsoleSignIn(next.consoleSignIn, next.adminClaim)
      const before = snapshot(toProvider(row))
      const after = snapshot(toProvider(next))
      const changed = Object.keys(after).filter(
        (k) => JSON.stringify(before[k]) !== JSON.stringify(after[k]),
      )
      const secretChanged = secret !== row.secret
      if (changed.length === 0 && !secretChanged) {
        m.noop()
        return toProvider(row)
      }
      const [updated] = await onUniqueViolation(
        () =>
          m.tx
            .update(identityProviders)
            .set({ ...next, updatedBy: actorId, updatedAt: m.now })
            .where(eq(identityProviders.id, id))
            .returning(),
        () => new ResourceConflictError('identity provider name or issuer already exists'),
      )
      m.audit('identity_provider', id, 'update', {
        before: Object.fromEntries(changed.map((k) => [k, before[k] ?? null])),
        after: Object.fromEntries(changed.map((k) => [k, after[k] ?? null])),
        ...(secretChanged ? { client_secret_changed: true } : {}),
      })
      return toProvider(updated as Row)
    })
  }

  /**
   * Deletes a provider. The role memberships its claims granted go with it (each audited as a
   * `remove_member`), and the users keep their accounts without a linked identity.
   */
  async delete(id: string, actorId: string): Promise<void> {
    await this.#ctx.mutate(actorId, async (m) => {
      const row = await requireProvider(m.tx, id, true)
      await this.#removeGrantedMemberships(m, id)
      await m.tx.delete(identityProviders).where(eq(identityProviders.id, id))
      m.audit('identity_provider', id, 'delete', { before: snapshot(toProvider(row)) })
    })
  }

  async #removeGrantedMemberships(m: Mutation, providerId: string): Promise<void> {
    const removed = await m.tx
      .delete(roleMembers)
      .where(
        and(
          isNotNull(roleMembers.identityProviderId),
          eq(roleMembers.identityProviderId, providerId),
        ),
      )
      .returning({ roleId: roleMembers.roleId, userId: roleMembers.userId })
    for (const r of removed) {
      m.audit('role_member', r.roleId, 'remove_member', {
        user_id: r.userId,
        role_id: r.roleId,
        reason: 'identity_provider_deleted',
      })
    }
    if (removed.length > 0)
      m.invalidate({ type: 'user', userIds: [...new Set(removed.map((r) => r.userId))] })
  }
}
