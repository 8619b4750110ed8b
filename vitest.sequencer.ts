import { statSync } from 'node:fs'
import { relative } from 'node:path'
import { BaseSequencer, type TestSpecification } from 'vitest/node'

/**
 * Seconds the slowest files take in a run of the whole suite on two workers (PostgreSQL tier
 * on; the console's end-to-end files from a CI run with Chromium). Used when this checkout has
 * no results of an earlier run, as on CI: by size alone a short file that runs long cases
 * (`pglite.test.ts` runs every store case) would start last and end the run alone.
 */
const KNOWN_SECONDS: Record<string, number> = {
  'store:packages/store/test/pglite.test.ts': 112,
  'store:packages/store/test/postgres.test.ts': 38,
  'server:packages/server/test/statement-limits.postgres.test.ts': 38,
  'server:packages/server/test/abandoned-statements.postgres.test.ts': 36,
  'server:packages/server/test/console/console-pages.e2e.test.ts': 35,
  'server:packages/server/test/upstream-faults.postgres.test.ts': 35,
  'server:packages/server/test/postgres.test.ts': 32,
  'server:packages/server/test/console/console.e2e.test.ts': 31,
  'server:packages/server/test/http/discovery.test.ts': 31,
  'server:packages/server/test/console/console-identity-providers.e2e.test.ts': 30,
  'server:packages/server/test/robustness.postgres.test.ts': 30,
  'server:packages/server/test/http/catalog-wide-postgres.test.ts': 29,
  'server:packages/server/test/wide-catalog.postgres.test.ts': 35,
  'server:packages/server/test/http/preview.test.ts': 22,
  'server:packages/server/test/protocol-strictness.postgres.test.ts': 18,
  'server:packages/server/test/http/bad-input-fuzz.test.ts': 18,
  'server:packages/server/test/login-timing.test.ts': 17,
  'server:packages/server/test/compat/postgres.compat.test.ts': 17,
  'server:packages/server/test/login-throttling.test.ts': 16,
  'store:packages/store/test/mask-keys.test.ts': 16,
  'core:packages/core/test/security/differential.test.ts': 16,
  'server:packages/server/test/time-bound-access.postgres.test.ts': 15,
  'server:packages/server/test/http/simulations.test.ts': 14,
  'core:packages/core/src/decision/memory-stability.test.ts': 13,
  'server:packages/server/test/robustness.pglite.test.ts': 13,
  'server:packages/server/test/transaction-pool.postgres.test.ts': 13,
  'server:packages/server/test/http/policy-bundles.test.ts': 12,
  'server:packages/server/test/bench-discard-audit.test.ts': 12,
  'server:packages/server/test/login-limits.test.ts': 11,
  'server:packages/server/test/cli/options.test.ts': 10,
  'core:packages/core/test/pg-catalog.test.ts': 10,
  'server:packages/server/test/user-limits.postgres.test.ts': 9,
  'store:packages/store/test/catalog-docs-migration.test.ts': 9,
  'store:packages/store/test/audit-migration.test.ts': 8,
  'core:packages/core/test/security/view-differential.test.ts': 8,
  'server:packages/server/test/token-logins.postgres.test.ts': 8,
  'server:packages/server/test/cli/demo.test.ts': 8,
  'store:packages/store/test/limits.test.ts': 8,
}

/**
 * Bytes of test source per second of run time, to guess the files without a known time (the
 * largest of them, about 20 KB, then rank below the files above).
 */
const BYTES_PER_SECOND = 3_000

/**
 * Longest files first, across projects (vitest's own order runs the projects one after the
 * other and, without earlier results, each project's largest files first). With two workers a
 * long file started near the end lengthens the whole run; started first, the short files fill
 * in beside it. A file's time is the time above (else a guess from its size), or its duration
 * in the last run when vitest kept one and that was longer.
 */
export default class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const root = this.ctx.config.root
    const estimate = new Map<TestSpecification, number>()
    for (const spec of files) {
      const key = `${spec.project.name}:${relative(root, spec.moduleId)}`
      const last = this.ctx.cache.getFileTestResults(key)
      const known = KNOWN_SECONDS[key]
      // The longer of the two: a last run without PALISADE_TEST_PG_URL skipped the PostgreSQL
      // tier, and its few milliseconds say nothing of a run with it.
      const ms = Math.max(
        last?.duration ?? 0,
        known === undefined ? (sizeOf(spec.moduleId) / BYTES_PER_SECOND) * 1000 : known * 1000,
      )
      // A file that failed last time runs first, as with vitest's own order.
      estimate.set(spec, last?.failed ? Number.POSITIVE_INFINITY : ms)
    }
    return [...files].sort((a, b) => (estimate.get(b) as number) - (estimate.get(a) as number))
  }
}

function sizeOf(path: string): number {
  try {
    return statSync(path).size
  } catch {
    return 0
  }
}
