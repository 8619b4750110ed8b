import { pgliteHarness } from './fixtures/harness.js'
import { runPgwireCases } from './pgwire.cases.js'

runPgwireCases('PGlite', pgliteHarness)
