import { pgliteHarness } from './fixtures/harness.js'
import { runTagCases } from './tags.cases.js'

runTagCases('PGlite', pgliteHarness)
