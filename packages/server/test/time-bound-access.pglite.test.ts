import { pgliteHarness } from './fixtures/harness.js'
import { runTimeBoundAccessCases } from './time-bound-access.cases.js'

runTimeBoundAccessCases('PGlite', pgliteHarness)
