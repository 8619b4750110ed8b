import { pgliteHarness } from './fixtures/harness.js'
import { runRobustnessCases } from './robustness.cases.js'

runRobustnessCases('PGlite', pgliteHarness)
