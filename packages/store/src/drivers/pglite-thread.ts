import { parentPort, workerData } from 'node:worker_threads'
import { PGlite, type Transaction } from '@electric-sql/pglite'
import { serialize } from 'pg-protocol'
import { AuditIngest, INSERT_BATCH, type RunBatchInsert } from '../audit/audit-ingest.js'
import {
  type PgliteRequest,
  type PgliteResponse,
  type PgliteThreadOptions,
  toWireError,
  type WireQueryOptions,
} from './pglite-messages.js'

/**
 * The embedded store's own thread: PGlite (PostgreSQL compiled to WebAssembly) runs here, so
 * its work (an audit batch, an admin search over a large log) never holds up the thread that
 * serves clients. Requests run as PGlite orders them: a query waits while a transaction is open.
 */

const port = parentPort
if (!port) throw new Error('pglite-thread.ts runs as a worker thread')
const options = workerData as PgliteThreadOptions

const reply = (message: PgliteResponse) => port.postMessage(message)

/** Open transactions by number, each with the way to end it. */
const transactions = new Map<number, { tx: Transaction; end: (commit: boolean) => void }>()
/** The promise of each open transaction's end (PGlite's `transaction` call). */
const ends = new Map<number, Promise<unknown>>()
let nextTransaction = 1
/** Thrown inside PGlite's transaction callback to roll it back. */
const ROLLBACK = Symbol('rollback')

const identity = (value: string) => value

/** The query audit's writing stream, once opened: batches are hashed, encoded and stored here. */
let audit: { ingest: AuditIngest; run: RunBatchInsert } | undefined

/** The name INSERT_BATCH is prepared under on the embedded store's one connection. */
const BATCH_STATEMENT = 'palisade_audit_batch'

/**
 * Runs INSERT_BATCH as a prepared statement, sent as one protocol message (bind, execute,
 * sync): `query` would parse and plan the statement anew for every batch and step into the
 * database once per protocol message, which cost more than storing the batch itself. It takes
 * PGlite's transaction and query locks, as `query` does, so a batch never runs inside a
 * transaction another request holds open.
 */
function preparedBatchInsert(db: PGlite): RunBatchInsert {
  let prepared = false
  return (params) =>
    db._runExclusiveTransaction(() =>
      db._runExclusiveQuery(async () => {
        const messages = [
          // A parse that failed, or a bind after it, leaves no statement or one to replace.
          ...(prepared
            ? []
            : [
                serialize.close({ type: 'S', name: BATCH_STATEMENT }),
                serialize.parse({ name: BATCH_STATEMENT, text: INSERT_BATCH, types: [] }),
              ]),
          serialize.bind({ statement: BATCH_STATEMENT, values: params }),
          serialize.execute({}),
          serialize.sync(),
        ]
        await db.execProtocol(Buffer.concat(messages))
        prepared = true
      }),
    )
}

function queryOptions(wire: WireQueryOptions) {
  return {
    ...(wire.rowMode ? { rowMode: wire.rowMode } : {}),
    ...(wire.textTypes
      ? { parsers: Object.fromEntries(wire.textTypes.map((oid) => [oid, identity])) }
      : {}),
  }
}

function runner(db: PGlite, tx: number | undefined): PGlite | Transaction {
  if (tx === undefined) return db
  const open = transactions.get(tx)
  if (!open) throw new Error('the transaction has ended')
  return open.tx
}

async function handle(db: PGlite, request: PgliteRequest): Promise<unknown> {
  switch (request.op) {
    case 'query':
      return runner(db, request.tx).query(
        request.sql,
        request.params,
        queryOptions(request.options),
      )
    case 'exec':
      return runner(db, request.tx).exec(request.sql)
    case 'begin': {
      const number = nextTransaction++
      return new Promise<number>((begun, failed) => {
        // Answered with the transaction's number once PGlite runs the callback; the 'end'
        // request is answered when PGlite has committed or rolled back.
        const done = db.transaction(
          (tx) =>
            new Promise<void>((resolve, reject) => {
              transactions.set(number, {
                tx,
                end: (commit) => (commit ? resolve() : reject(ROLLBACK)),
              })
              begun(number)
            }),
        )
        ends.set(number, done)
        done.catch(failed)
      })
    }
    case 'end': {
      const open = transactions.get(request.tx)
      const done = ends.get(request.tx)
      if (!open || !done) throw new Error('the transaction has ended')
      transactions.delete(request.tx)
      ends.delete(request.tx)
      open.end(request.commit)
      try {
        await done
      } catch (error) {
        if (error !== ROLLBACK) throw error
      }
      return null
    }
    case 'audit-open': {
      const key = request.key ? Buffer.from(request.key) : undefined
      audit = {
        ingest: new AuditIngest(key, request.chainId ?? undefined),
        run: preparedBatchInsert(db),
      }
      return null
    }
    case 'audit': {
      if (!audit) throw new Error('the query audit stream is not open')
      await audit.ingest.write(audit.run, request.batch)
      return null
    }
    case 'dump': {
      const file = await db.dumpDataDir('none')
      return { bytes: new Uint8Array(await file.arrayBuffer()), type: file.type }
    }
    case 'close':
      if (!db.closed) await db.close()
      return null
  }
}

async function main(): Promise<void> {
  let db: PGlite
  try {
    db = new PGlite({
      postgresqlconf: options.postgresqlconf,
      ...(options.dataDir ? { dataDir: options.dataDir } : {}),
      ...(options.load
        ? { loadDataDir: new Blob([options.load.bytes], { type: options.load.type }) }
        : {}),
    })
    await db.waitReady
  } catch (error) {
    reply({ id: 0, ready: false, error: toWireError(error) })
    return
  }
  port?.on('message', (request: PgliteRequest) => {
    handle(db, request).then(
      (value) => reply({ id: request.id, ok: true, value }),
      (error: unknown) => reply({ id: request.id, ok: false, error: toWireError(error) }),
    )
  })
  reply({ id: 0, ready: true })
}

void main()
