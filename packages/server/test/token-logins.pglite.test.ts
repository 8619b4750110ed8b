import { pgliteHarness } from './fixtures/harness.js'
import { runTokenLoginCases } from './token-logins.cases.js'

runTokenLoginCases('PGlite', pgliteHarness)
