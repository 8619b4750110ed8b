import { pgliteHarness } from './fixtures/harness.js'
import { runShadowingCases } from './shadowing.cases.js'

runShadowingCases('PGlite', pgliteHarness)
