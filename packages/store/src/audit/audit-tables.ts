import {
  bigint,
  boolean,
  index,
  integer,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uuid,
} from 'drizzle-orm/pg-core'
import { ts } from '../kernel/columns.js'

/** Admin audit (docs/audit.md#admin-audit): append-only, written in the mutation's own transaction. */
export const adminAuditLog = pgTable(
  'admin_audit_log',
  {
    id: uuid('id').primaryKey(),
    resourceType: text('resource_type').notNull(),
    resourceId: uuid('resource_id').notNull(),
    action: text('action').notNull(),
    actorId: uuid('actor_id').notNull(),
    changes: text('changes'),
    createdAt: ts('created_at').notNull().defaultNow(),
    /** Hash chain (audit-chain.ts): the writing stream, position in it, previous hash, own hash. */
    chainId: text('chain_id'),
    chainSeq: bigint('chain_seq', { mode: 'number' }),
    prevHash: text('prev_hash'),
    hash: text('hash'),
  },
  (t) => [
    index('admin_audit_chain_idx').on(t.chainId, t.chainSeq),
    index('admin_audit_created_idx').on(t.createdAt, t.id),
    index('admin_audit_resource_type_idx').on(t.resourceType, t.createdAt, t.id),
    index('admin_audit_resource_idx').on(t.resourceId, t.createdAt, t.id),
    index('admin_audit_actor_idx').on(t.actorId, t.createdAt, t.id),
  ],
)

/** Query audit (docs/audit.md#query-audit): one row per statement, written in batches after the result. */
export const queryAuditLog = pgTable(
  'query_audit_log',
  {
    id: uuid('id').primaryKey(),
    userId: uuid('user_id').notNull(),
    username: text('username').notNull(),
    dataSourceId: uuid('data_source_id').notNull(),
    datasourceName: text('datasource_name').notNull(),
    originalQuery: text('original_query').notNull(),
    rewrittenQuery: text('rewritten_query'),
    policiesApplied: text('policies_applied').notNull().default('[]'),
    executionTimeMs: integer('execution_time_ms'),
    clientInfo: text('client_info'),
    status: text('status').notNull(),
    errorMessage: text('error_message'),
    createdAt: ts('created_at').notNull().defaultNow(),
    /** Shadow policies that matched (JSON array like policies_applied), null without any. */
    shadowPolicies: text('shadow_policies'),
    /** Whether enforcing the shadow policies would have refused the statement. */
    shadowDenied: boolean('shadow_denied'),
    /** Hash chain (audit-chain.ts): the writing stream, position in it, previous hash, own hash. */
    chainId: text('chain_id'),
    chainSeq: bigint('chain_seq', { mode: 'number' }),
    prevHash: text('prev_hash'),
    hash: text('hash'),
  },
  (t) => [
    index('query_audit_chain_idx').on(t.chainId, t.chainSeq),
    index('query_audit_created_idx').on(t.createdAt, t.id),
    index('query_audit_user_idx').on(t.userId, t.createdAt, t.id),
    index('query_audit_ds_idx').on(t.dataSourceId, t.createdAt, t.id),
    index('query_audit_status_idx').on(t.status, t.createdAt, t.id),
  ],
)

/**
 * Hourly row counts of the query audit per (user, datasource, status), kept by a statement
 * trigger on `query_audit_log`, so list totals stay fast at millions of rows. `bucket` is the
 * UTC hour (timestamp without time zone).
 */
export const queryAuditCounts = pgTable(
  'query_audit_counts',
  {
    bucket: timestamp('bucket', { precision: 0, mode: 'string' }).notNull(),
    userId: uuid('user_id').notNull(),
    dataSourceId: uuid('data_source_id').notNull(),
    status: text('status').notNull(),
    n: bigint('n', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.bucket, t.userId, t.dataSourceId, t.status] })],
)

/**
 * Login audit: failed and throttled logins on both planes, and throttles an admin cleared.
 * Written in batches off the login's path; `username` is the name as typed (the user may not
 * exist), `reason` says why for admins only (clients see one answer for every failure).
 */
export const loginAuditLog = pgTable(
  'login_audit_log',
  {
    id: uuid('id').primaryKey(),
    plane: text('plane').notNull(),
    outcome: text('outcome').notNull(),
    reason: text('reason').notNull(),
    username: text('username'),
    clientAddress: text('client_address'),
    datasourceName: text('datasource_name'),
    actorId: uuid('actor_id'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    index('login_audit_created_idx').on(t.createdAt, t.id),
    index('login_audit_username_idx').on(t.username, t.createdAt, t.id),
    index('login_audit_address_idx').on(t.clientAddress, t.createdAt, t.id),
  ],
)
