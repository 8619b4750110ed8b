import { boolean, jsonb, pgTable, text, uuid } from 'drizzle-orm/pg-core'
import { idColumn, timestamps, ts } from '../kernel/columns.js'
import type { Limits } from '../kernel/limits.js'

/** Service users; `scram_verifier` replaces the password (docs/resources.md#users). */
export const users = pgTable('users', {
  id: idColumn(),
  username: text('username').notNull().unique(),
  scramVerifier: text('scram_verifier').notNull(),
  isAdmin: boolean('is_admin').notNull().default(false),
  isActive: boolean('is_active').notNull().default(true),
  email: text('email'),
  displayName: text('display_name'),
  attributes: jsonb('attributes').$type<Record<string, unknown>>().notNull().default({}),
  /** Row and rate limits (docs/roles-and-access.md#limits); null: none of its own. */
  limits: jsonb('limits').$type<Limits>(),
  lastLoginAt: ts('last_login_at'),
  passwordChangedAt: ts('password_changed_at').notNull().defaultNow(),
  createdBy: uuid('created_by'),
  updatedBy: uuid('updated_by'),
  ...timestamps(),
})

/** Admin tokens ended by logout before their expiry; rows go once the token would expire. */
export const revokedTokens = pgTable('revoked_tokens', {
  tokenId: text('token_id').primaryKey(),
  userId: uuid('user_id').notNull(),
  expiresAt: ts('expires_at').notNull(),
  revokedAt: ts('revoked_at').notNull().defaultNow(),
})
