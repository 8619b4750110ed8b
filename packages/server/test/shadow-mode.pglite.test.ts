import { pgliteHarness } from './fixtures/harness.js'
import { runShadowModeCases } from './shadow-mode.cases.js'

runShadowModeCases('PGlite', pgliteHarness)
