import { sql } from 'drizzle-orm'
import { boolean, index, jsonb, pgTable, primaryKey, text, uuid } from 'drizzle-orm/pg-core'
import { identityProviders } from '../identity-providers/identity-providers-tables.js'
import { idColumn, timestamps, ts, validity } from '../kernel/columns.js'
import type { Limits } from '../kernel/limits.js'
import { users } from '../users/users-tables.js'

/** Global roles (docs/roles-and-access.md#roles); no attributes. */
export const roles = pgTable('roles', {
  id: idColumn(),
  name: text('name').notNull().unique(),
  description: text('description'),
  isActive: boolean('is_active').notNull().default(true),
  /** Row and rate limits (docs/roles-and-access.md#limits); null: none of its own. */
  limits: jsonb('limits').$type<Limits>(),
  createdBy: uuid('created_by'),
  updatedBy: uuid('updated_by'),
  ...timestamps(),
})

/** Direct user membership of a role. */
export const roleMembers = pgTable(
  'role_members',
  {
    roleId: uuid('role_id')
      .notNull()
      .references(() => roles.id, { onDelete: 'cascade' }),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    ...validity(),
    /** Set when an identity provider's role claim granted it (docs/sso.md): each login re-syncs. */
    identityProviderId: uuid('identity_provider_id').references(() => identityProviders.id, {
      onDelete: 'cascade',
    }),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.roleId, t.userId] }),
    index('role_members_user_idx').on(t.userId),
    index('role_members_valid_until_idx').on(t.validUntil).where(sql`valid_until IS NOT NULL`),
  ],
)

/** Inheritance edge: `role_id` (child) inherits from `parent_role_id`. */
export const roleInheritance = pgTable(
  'role_inheritance',
  {
    roleId: uuid('role_id')
      .notNull()
      .references(() => roles.id, { onDelete: 'cascade' }),
    parentRoleId: uuid('parent_role_id')
      .notNull()
      .references(() => roles.id, { onDelete: 'cascade' }),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    primaryKey({ columns: [t.roleId, t.parentRoleId] }),
    index('role_inheritance_parent_idx').on(t.parentRoleId),
  ],
)
