import { pgliteHarness } from './fixtures/harness.js'
import { runUserLimitCases } from './user-limits.cases.js'

runUserLimitCases('PGlite', pgliteHarness)
