import { parentPort } from 'node:worker_threads'
import { loadParser } from '../ast/parse.js'
import { BoundedCache } from '../bounded-cache.js'
import type { Catalog } from '../catalog.types.js'
import { isPalisadeError } from '../errors.js'
import { rewrite } from '../rewrite.js'
import { compileSessionSync } from '../session/compile-session.js'
import type { CompiledSession } from '../session/compiled-session.js'
import { SqlState } from '../sqlstate.js'
import type { RewriteRequest, RewriteResponse, SerializedRewriteError } from './rewrite-protocol.js'

/**
 * A rewrite worker: parses and rewrites large statements off the main thread, on its own copy of
 * each session (compiled from the same input, so it rewrites exactly as the main thread would).
 */
const port = parentPort
if (!port) throw new Error('rewrite-worker runs as a worker thread')

const sessions = new BoundedCache<number, CompiledSession>(64)
const catalogs = new BoundedCache<number, Catalog>(16)

function answer(request: RewriteRequest): RewriteResponse {
  let session = sessions.get(request.key)
  if (!session) {
    const key = request.catalogKey
    const catalog = request.catalog ?? (key === undefined ? undefined : catalogs.get(key))
    if (!request.input || key === undefined || !catalog) return { id: request.id, missing: true }
    if (request.catalog) catalogs.set(key, request.catalog)
    session = compileSessionSync({ ...request.input, catalog })
    sessions.set(request.key, session)
  }
  try {
    return { id: request.id, result: rewrite(request.sql, session) }
  } catch (error) {
    return { id: request.id, error: serialize(error) }
  }
}

function serialize(error: unknown): SerializedRewriteError {
  if (isPalisadeError(error)) {
    return {
      code: error.code,
      message: error.message,
      severity: error.severity,
      detail: error.detail,
      hint: error.hint,
      auditStatus: error.auditStatus,
      auditMessage: error.auditMessage,
    }
  }
  const cause = error instanceof Error ? error.message : String(error)
  return {
    code: SqlState.InternalError,
    message: 'internal error',
    severity: 'ERROR',
    detail: undefined,
    hint: undefined,
    auditStatus: 'error',
    auditMessage: `rewrite failed: ${cause}`,
  }
}

await loadParser()
port.on('message', (request: RewriteRequest) => port.postMessage(answer(request)))
port.postMessage({ ready: true } satisfies RewriteResponse)
