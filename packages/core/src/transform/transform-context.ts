import type { QueryAnalysis } from '../analyze/query-analyzer.js'
import type { CompiledSession } from '../session/compiled-session.js'

/** What every pass of the rewrite's tree transformation reads (ast/tag-dispatch.ts). */
export interface TransformContext {
  readonly session: CompiledSession
  readonly analysis: QueryAnalysis
  /** Maps a subtree with every pass: for handlers that rebuild a node around mapped parts. */
  map<T>(value: T): T
}
