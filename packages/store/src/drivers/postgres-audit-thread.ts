import { parentPort, workerData } from 'node:worker_threads'
import pg from 'pg'
import type { AuditBatch } from '../audit/audit-batch.js'
import { AuditIngest, INSERT_BATCH } from '../audit/audit-ingest.js'
import { toWireError } from './pglite-messages.js'

/**
 * The PostgreSQL store's query-audit thread: it hashes, encodes and stores the batches the
 * serving thread hands over (audit-ingest.ts), on a connection of its own, so none of that work
 * runs on the thread that serves clients.
 */

export interface AuditThreadOptions {
  databaseUrl: string
  key: Uint8Array | null
  chainId: string
}

export type AuditThreadRequest =
  | { id: number; op: 'audit'; batch: AuditBatch }
  | { id: number; op: 'close' }

const port = parentPort
if (!port) throw new Error('postgres-audit-thread.ts runs as a worker thread')
const options = workerData as AuditThreadOptions

const pool = new pg.Pool({
  connectionString: options.databaseUrl,
  max: 1,
  connectionTimeoutMillis: 5_000,
  keepAlive: true,
  application_name: 'palisade query audit',
})
// A dropped idle connection must not end the thread; the next batch opens a new one.
pool.on('error', () => {})
pool.on('connect', (client) => client.on('error', () => {}))
const ingest = new AuditIngest(options.key ? Buffer.from(options.key) : undefined, options.chainId)
// Prepared once per connection (node-postgres keeps named statements per connection).
const run = async (params: (string | null)[]) => {
  await pool.query({ name: 'palisade_audit_batch', text: INSERT_BATCH, values: params })
}

port.on('message', (request: AuditThreadRequest) => {
  const done =
    request.op === 'audit' ? ingest.write(run, request.batch) : pool.end().then(() => undefined)
  done.then(
    () => port.postMessage({ id: request.id, ok: true }),
    (error: unknown) => port.postMessage({ id: request.id, ok: false, error: toWireError(error) }),
  )
})
