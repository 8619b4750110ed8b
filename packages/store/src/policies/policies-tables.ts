import type { PolicyTarget } from '@palisade/core'
import { sql } from 'drizzle-orm'
import {
  boolean,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core'
import { datasources } from '../datasources/datasources-tables.js'
import { decisionFunctions } from '../decision-functions/decision-functions-tables.js'
import { idColumn, timestamps, ts, validity } from '../kernel/columns.js'
import { roles } from '../roles/roles-tables.js'
import { users } from '../users/users-tables.js'

/** Policies (docs/policies.md); `version` is the optimistic-concurrency counter. */
export const policies = pgTable('policies', {
  id: idColumn(),
  name: text('name').notNull().unique(),
  description: text('description'),
  policyType: text('policy_type').notNull(),
  targets: jsonb('targets').$type<PolicyTarget[]>().notNull(),
  filterExpression: text('filter_expression'),
  maskExpression: text('mask_expression'),
  /** `aggregation` only: the fewest rows a returned group may draw on (docs/policies.md). */
  minGroupSize: integer('min_group_size'),
  /** `aggregation` only: value-revealing aggregates the policy allows, lowercase names. */
  allowedAggregates: jsonb('allowed_aggregates').$type<string[]>(),
  decisionFunctionId: uuid('decision_function_id').references(() => decisionFunctions.id, {
    onDelete: 'restrict',
  }),
  isEnabled: boolean('is_enabled').notNull().default(true),
  /** `enforce`, or `shadow`: evaluated and audited, never applied (docs/policies.md). */
  enforcement: text('enforcement').notNull().default('enforce'),
  version: integer('version').notNull().default(1),
  createdBy: uuid('created_by'),
  updatedBy: uuid('updated_by'),
  ...timestamps(),
})

/** One immutable snapshot per policy version, kept after edits and deletes (docs/audit.md: the query audit names policy versions). */
export const policyVersions = pgTable(
  'policy_versions',
  {
    policyId: uuid('policy_id').notNull(),
    version: integer('version').notNull(),
    snapshot: jsonb('snapshot').$type<Record<string, unknown>>().notNull(),
    createdBy: uuid('created_by'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.policyId, t.version] })],
)

/** A policy bound to a datasource for one scope (docs/roles-and-access.md#policy-assignments). */
export const policyAssignments = pgTable(
  'policy_assignments',
  {
    id: idColumn(),
    policyId: uuid('policy_id')
      .notNull()
      .references(() => policies.id, { onDelete: 'cascade' }),
    datasourceId: uuid('datasource_id')
      .notNull()
      .references(() => datasources.id, { onDelete: 'cascade' }),
    scope: text('scope').notNull(),
    userId: uuid('user_id').references(() => users.id, { onDelete: 'cascade' }),
    roleId: uuid('role_id').references(() => roles.id, { onDelete: 'cascade' }),
    priority: integer('priority').notNull().default(100),
    ...validity(),
    createdBy: uuid('created_by'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    index('policy_assignments_valid_until_idx')
      .on(t.validUntil)
      .where(sql`valid_until IS NOT NULL`),
    uniqueIndex('policy_assignments_user_uq')
      .on(t.policyId, t.datasourceId, t.userId)
      .where(sql`scope = 'user'`),
    uniqueIndex('policy_assignments_role_uq')
      .on(t.policyId, t.datasourceId, t.roleId)
      .where(sql`scope = 'role'`),
    uniqueIndex('policy_assignments_all_uq')
      .on(t.policyId, t.datasourceId)
      .where(sql`scope = 'all'`),
    index('policy_assignments_ds_idx').on(t.datasourceId),
    index('policy_assignments_user_idx').on(t.userId),
    index('policy_assignments_role_idx').on(t.roleId),
  ],
)
