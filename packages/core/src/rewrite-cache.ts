import type { RewriteResult } from './rewrite.types.js'
import type { CompiledSession } from './session/compiled-session.js'

/** @internal The session's cached rewrite of exactly this text, if any. */
export function cachedRewrite(sql: string, session: CompiledSession): RewriteResult | undefined {
  if (session.hasQueryDecisions) return undefined
  return session.rewriteCache.get(sql) as RewriteResult | undefined
}

/** @internal Caches a rewrite (one made elsewhere too: a rewrite worker) for the session. */
export function rememberRewrite(
  sql: string,
  session: CompiledSession,
  result: RewriteResult,
): void {
  if (!session.hasQueryDecisions && sql.length <= 16_384) session.rewriteCache.set(sql, result)
}
