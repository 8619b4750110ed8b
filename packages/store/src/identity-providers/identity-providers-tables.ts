import { boolean, index, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core'
import { idColumn, timestamps, ts } from '../kernel/columns.js'
import { users } from '../users/users-tables.js'

/** A claim copied into a user attribute at every token login (docs/sso.md). */
export interface AttributeMapping {
  claim: string
  attribute: string
}

/** A value of the role claim that makes the user a member of a role (docs/sso.md). */
export interface RoleMapping {
  value: string
  role_id: string
}

/** The claim value that makes a console sign-in an admin's (docs/sso.md#console-sign-in). */
export interface AdminClaim {
  claim: string
  value: string
}

/** OpenID Connect providers whose tokens log users in (docs/sso.md); `secret` is sealed. */
export const identityProviders = pgTable('identity_providers', {
  id: idColumn(),
  name: text('name').notNull().unique(),
  issuer: text('issuer').notNull().unique(),
  clientId: text('client_id').notNull(),
  secret: text('secret'),
  audiences: jsonb('audiences').$type<string[]>().notNull().default([]),
  /** Null: `preferred_username`, else `email`, else `sub`. */
  usernameClaim: text('username_claim'),
  roleClaim: text('role_claim').notNull().default('groups'),
  attributeMappings: jsonb('attribute_mappings').$type<AttributeMapping[]>().notNull().default([]),
  roleMappings: jsonb('role_mappings').$type<RoleMapping[]>().notNull().default([]),
  jitUsers: boolean('jit_users').notNull().default(false),
  isActive: boolean('is_active').notNull().default(true),
  /** Offered on the console's sign-in page (authorization code flow). */
  consoleSignIn: boolean('console_sign_in').notNull().default(false),
  /** Without it nobody signs in to the console through this provider. */
  adminClaim: jsonb('admin_claim').$type<AdminClaim>(),
  createdBy: uuid('created_by'),
  updatedBy: uuid('updated_by'),
  ...timestamps(),
})

/**
 * Which provider subject a user is: set at the user's first token login, so a later token
 * naming the same username with another subject is refused.
 */
export const userIdentities = pgTable(
  'user_identities',
  {
    userId: uuid('user_id')
      .primaryKey()
      .references(() => users.id, { onDelete: 'cascade' }),
    identityProviderId: uuid('identity_provider_id')
      .notNull()
      .references(() => identityProviders.id, { onDelete: 'cascade' }),
    subject: text('subject').notNull(),
    /** The provider's admin claim made this user an admin, so losing the claim demotes them. */
    adminGranted: boolean('admin_granted').notNull().default(false),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    uniqueIndex('user_identities_subject_uq').on(t.identityProviderId, t.subject),
    index('user_identities_provider_idx').on(t.identityProviderId),
  ],
)

/**
 * Console sign-ins under way (authorization code flow): kept from the redirect to the provider
 * until the callback consumes them, once, within a few minutes. Keyed by a digest of `state`.
 */
export const ssoSignIns = pgTable(
  'sso_sign_ins',
  {
    stateHash: text('state_hash').primaryKey(),
    identityProviderId: uuid('identity_provider_id')
      .notNull()
      .references(() => identityProviders.id, { onDelete: 'cascade' }),
    nonce: text('nonce').notNull(),
    /** Sealed with the store's key. */
    codeVerifier: text('code_verifier').notNull(),
    redirectUri: text('redirect_uri').notNull(),
    expiresAt: ts('expires_at').notNull(),
  },
  (t) => [index('sso_sign_ins_expires_idx').on(t.expiresAt)],
)
