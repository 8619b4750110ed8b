import { sql } from 'drizzle-orm'
import {
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  text,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core'
import { idColumn, timestamps, ts, validity } from '../kernel/columns.js'
import { roles } from '../roles/roles-tables.js'
import { users } from '../users/users-tables.js'

/** Upstream datasources; `config` holds non-secret settings, `secret` the sealed password. */
export const datasources = pgTable('datasources', {
  id: idColumn(),
  name: text('name').notNull().unique(),
  dsType: text('ds_type').notNull(),
  config: jsonb('config').$type<Record<string, unknown>>().notNull().default({}),
  secret: text('secret'),
  accessMode: text('access_mode').notNull().default('policy_required'),
  isActive: boolean('is_active').notNull().default(true),
  statementTimeoutMs: integer('statement_timeout_ms').notNull().default(0),
  poolSize: integer('pool_size').notNull().default(10),
  /** `session` or `transaction`; null follows the server's default pool mode. */
  poolMode: text('pool_mode'),
  lastSyncAt: ts('last_sync_at'),
  lastSyncResult: jsonb('last_sync_result'),
  /** Whether classification may read a bounded sample of column values (names are always read). */
  classificationSampling: boolean('classification_sampling').notNull().default(true),
  /** Bumped with every catalog, relationship or anchor change; keys the session-context cache. */
  catalogVersion: integer('catalog_version').notNull().default(0),
  createdBy: uuid('created_by'),
  updatedBy: uuid('updated_by'),
  ...timestamps(),
})

/** Access entries (`data_source_access`) of scope user, role or all (docs/roles-and-access.md#datasource-access). */
export const datasourceAccess = pgTable(
  'datasource_access',
  {
    id: idColumn(),
    datasourceId: uuid('datasource_id')
      .notNull()
      .references(() => datasources.id, { onDelete: 'cascade' }),
    scope: text('scope').notNull(),
    userId: uuid('user_id').references(() => users.id, { onDelete: 'cascade' }),
    roleId: uuid('role_id').references(() => roles.id, { onDelete: 'cascade' }),
    ...validity(),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    index('datasource_access_valid_until_idx').on(t.validUntil).where(sql`valid_until IS NOT NULL`),
    uniqueIndex('datasource_access_user_uq')
      .on(t.datasourceId, t.userId)
      .where(sql`scope = 'user'`),
    uniqueIndex('datasource_access_role_uq')
      .on(t.datasourceId, t.roleId)
      .where(sql`scope = 'role'`),
    uniqueIndex('datasource_access_all_uq').on(t.datasourceId).where(sql`scope = 'all'`),
    index('datasource_access_user_idx').on(t.userId),
    index('datasource_access_role_idx').on(t.roleId),
  ],
)
