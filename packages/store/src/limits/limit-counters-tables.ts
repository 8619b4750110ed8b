import { index, integer, pgTable, primaryKey, uuid } from 'drizzle-orm/pg-core'
import { ts } from '../kernel/columns.js'

/**
 * Statements per user and one-minute window (`max_statements_per_minute`,
 * docs/roles-and-access.md#limits), shared by the instances of one store; `window` is minutes
 * since the epoch. Rows of past windows are removed as instances go.
 */
export const statementRateCounts = pgTable(
  'statement_rate_counts',
  {
    userId: uuid('user_id').notNull(),
    window: integer('window').notNull(),
    count: integer('count').notNull(),
  },
  (t) => [primaryKey({ columns: [t.userId, t.window] })],
)

/**
 * Statements running now, one row each (`max_concurrent_statements`). The instance running one
 * extends `expires_at` while it runs, so the slots of a crashed instance lapse by themselves.
 */
export const statementSlots = pgTable(
  'statement_slots',
  {
    id: uuid('id').primaryKey(),
    userId: uuid('user_id').notNull(),
    expiresAt: ts('expires_at').notNull(),
  },
  (t) => [index('statement_slots_user_idx').on(t.userId, t.expiresAt)],
)
