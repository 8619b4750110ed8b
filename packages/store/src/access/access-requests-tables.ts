import { sql } from 'drizzle-orm'
import { check, index, integer, pgTable, text, uuid } from 'drizzle-orm/pg-core'
import { datasources } from '../datasources/datasources-tables.js'
import { idColumn, timestamps, ts } from '../kernel/columns.js'
import { roles } from '../roles/roles-tables.js'
import { users } from '../users/users-tables.js'

/**
 * A user's request for a role or a datasource for a while (docs/policies.md "Requested access").
 * Approval creates the time-bound grant; the request keeps who decided, when and until when.
 */
export const accessRequests = pgTable(
  'access_requests',
  {
    id: idColumn(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** `role` or `datasource`: which of the two ids below is set. */
    kind: text('kind').notNull(),
    roleId: uuid('role_id').references(() => roles.id, { onDelete: 'cascade' }),
    datasourceId: uuid('datasource_id').references(() => datasources.id, { onDelete: 'cascade' }),
    reason: text('reason').notNull(),
    durationSeconds: integer('duration_seconds').notNull(),
    /** `pending`, then `approved`, `denied` or `cancelled`. */
    status: text('status').notNull().default('pending'),
    decidedBy: uuid('decided_by'),
    decidedAt: ts('decided_at'),
    decisionComment: text('decision_comment'),
    /** End of the granted window (approved requests only). */
    grantedUntil: ts('granted_until'),
    ...timestamps(),
  },
  (t) => [
    index('access_requests_status_idx').on(t.status, t.createdAt),
    index('access_requests_user_idx').on(t.userId, t.createdAt),
    check(
      'access_requests_target_ck',
      sql`(kind = 'role' AND role_id IS NOT NULL AND datasource_id IS NULL)
        OR (kind = 'datasource' AND datasource_id IS NOT NULL AND role_id IS NULL)`,
    ),
  ],
)
