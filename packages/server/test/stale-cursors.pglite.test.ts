import { pgliteHarness } from './fixtures/harness.js'
import { runStaleCursorCases } from './stale-cursors.cases.js'

runStaleCursorCases('PGlite', pgliteHarness)
