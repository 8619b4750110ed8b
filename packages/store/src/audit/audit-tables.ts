import {
  bigint,
  boolean,
  index,
  integer,
  pgTable,
  primaryKey,
  smallint,
  text,
  timestamp,
  uuid,
} from 'drizzle-orm/pg-core'
import { bytea, ts } from '../kernel/columns.js'

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

/**
 * Query audit (docs/audit.md#how-rows-are-stored): entries are stored in sealed batches, one row
 * per batch with one array element per entry, so the store writes one tuple per batch instead of
 * one per statement. Long texts (statements, policies applied, error messages) live once in
 * `query_audit_texts` and are referenced by 1-based index into the batch's `texts`.
 * Times are milliseconds since the epoch. Format 1: entries moved from the row-per-entry log of
 * earlier versions (each with its own HMAC link in `e_hash`); format 2: a batch sealed as a whole;
 * format 3 (written now): sealed, its entries packed and compressed in `e_data` and `e_literals`
 * (audit-entry-pack.ts) instead of the `e_*` arrays, which it leaves null.
 */
export const queryAuditChunks = pgTable(
  'query_audit_chunks',
  {
    id: uuid('id').primaryKey(),
    format: smallint('format').notNull(),
    chainId: text('chain_id'),
    firstSeq: bigint('first_seq', { mode: 'number' }),
    /** Format 2: the content hash of the chain's previous entry ('' for the first). */
    prevHash: text('prev_hash'),
    /** Format 2: HMAC-SHA256 seal of the batch (audit-chunk-format.ts). */
    hash: text('hash'),
    firstAt: bigint('first_at', { mode: 'number' }).notNull(),
    lastAt: bigint('last_at', { mode: 'number' }).notNull(),
    entries: integer('entries').notNull(),
    /** Bit 1 success, 2 error, 4 denied: which statuses the batch holds. */
    statusMask: smallint('status_mask').notNull(),
    /** Who ran the statements: parallel arrays, one element per principal of the batch. */
    pUserId: uuid('p_user_id').array().notNull(),
    pUsername: text('p_username').array().notNull(),
    pDsId: uuid('p_ds_id').array().notNull(),
    pDsName: text('p_ds_name').array().notNull(),
    pClientInfo: text('p_client_info').array().notNull(),
    /** Digests of the texts the batch refers to. */
    texts: uuid('texts').array().notNull(),
    eId: uuid('e_id').array(),
    eAt: bigint('e_at', { mode: 'number' }).array(),
    ePrincipal: smallint('e_principal').array(),
    eOriginal: smallint('e_original').array(),
    /** The literals cut out of a templated statement (a JSON array), or null. */
    eParams: text('e_params').array(),
    eRewritten: smallint('e_rewritten').array(),
    ePolicies: smallint('e_policies').array(),
    eElapsed: integer('e_elapsed').array(),
    /** 0 success, 1 error, 2 denied. */
    eStatus: smallint('e_status').array(),
    eError: smallint('e_error').array(),
    eShadow: smallint('e_shadow').array(),
    eShadowDenied: boolean('e_shadow_denied').array(),
    /** Format 3: entries per principal and status, element `(p - 1) * 3 + status + 1`. */
    pCounts: integer('p_counts').array(),
    /** Format 3: the packed entries (audit-entry-pack.ts). */
    eData: bytea('e_data'),
    /** Format 3: the literals of templated statements, packed; null when there are none. */
    eLiterals: bytea('e_literals'),
    /** Format 1 only: each entry's HMAC link, as the row-per-entry log stored it. */
    eHash: text('e_hash').array(),
  },
  (t) => [
    index('query_audit_chunks_at_idx').on(t.firstAt, t.id),
    index('query_audit_chunks_last_idx').on(t.lastAt, t.id),
    index('query_audit_chunks_chain_idx').on(t.chainId, t.firstSeq),
  ],
)

/** Texts of the query audit, stored once: `digest` is the first 16 bytes of their SHA-256. */
export const queryAuditTexts = pgTable('query_audit_texts', {
  digest: uuid('digest').primaryKey(),
  body: text('body').notNull(),
})

/**
 * Hourly row counts of the query audit per (user, datasource, status), kept by the query-audit
 * writer in the transaction of each batch, so list totals stay fast at millions of rows. `bucket` is the
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
 * Retention checkpoints of the query audit (docs/audit.md#retention; audit-checkpoints.ts): one
 * row per retention run that removed batches, append-only. `positions` is JSON text
 * `[{chain_id, seq, hash}]`, sorted by chain: per chain whose entries were removed, the last
 * removed entry's sequence number and content hash, where the chain now resumes. `signature` is
 * HMAC-SHA256, with the chain key, of the checkpoint's canonical content. A batch may be deleted
 * only when it ends before the cutoff of a checkpoint (migration 0015).
 */
export const queryAuditCheckpoints = pgTable(
  'query_audit_checkpoints',
  {
    id: uuid('id').primaryKey(),
    /** Milliseconds since the epoch, as the batches' times. */
    createdAt: bigint('created_at', { mode: 'number' }).notNull(),
    /** Batches whose last entry is older than this (ms) were removed. */
    cutoff: bigint('cutoff', { mode: 'number' }).notNull(),
    positions: text('positions').notNull(),
    removedChunks: integer('removed_chunks').notNull(),
    removedEntries: bigint('removed_entries', { mode: 'number' }).notNull(),
    signature: text('signature').notNull(),
  },
  (t) => [index('query_audit_checkpoints_cutoff_idx').on(t.cutoff)],
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
