import { sql } from 'drizzle-orm'
import { bigint, check, integer, pgTable } from 'drizzle-orm/pg-core'

/**
 * One row of store-wide counters. `policy_version` is bumped by triggers on every change to
 * policies, assignments and decision functions, so cached effective policies can be validated
 * with one read on any instance.
 */
export const storeState = pgTable(
  'store_state',
  {
    id: integer('id').primaryKey(),
    policyVersion: bigint('policy_version', { mode: 'number' }).notNull().default(0),
  },
  (t) => [check('store_state_single_row', sql`${t.id} = 1`)],
)
