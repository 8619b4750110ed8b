import { pgliteHarness } from './fixtures/harness.js'
import { runStatementLimitCases } from './statement-limits.cases.js'

runStatementLimitCases('PGlite', pgliteHarness)
