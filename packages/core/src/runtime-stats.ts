/**
 * Process-wide counters of the rewrite caches and decision-function evaluations, for an
 * embedder's metrics (Palisade's `/metrics`). Plain increments: they sit on every statement's
 * path, so nothing here may cost more than a field write.
 */
export const runtimeStats = {
  /** Statements answered from a session's rewrite cache (same text seen before). */
  rewriteCacheHits: 0,
  /** Statements answered from a literal template (same shape, other literals). */
  rewriteTemplateHits: 0,
  /** Statements parsed and rewritten. */
  rewriteMisses: 0,
  /** Decision-function evaluations. */
  decisionEvaluations: 0,
  /** Evaluations that failed (threw, returned no decision, or hit a limit). */
  decisionErrors: 0,
  /** Failures that hit the fuel limit. */
  decisionFuelExhausted: 0,
  /** Failures that hit the time limit. */
  decisionTimeouts: 0,
}
