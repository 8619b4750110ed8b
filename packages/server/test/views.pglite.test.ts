import { pgliteHarness } from './fixtures/harness.js'
import { runViewCases } from './views.cases.js'

runViewCases('PGlite', pgliteHarness)
