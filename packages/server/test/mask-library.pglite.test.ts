import { pgliteHarness } from './fixtures/harness.js'
import { runMaskLibraryCases } from './mask-library.cases.js'

runMaskLibraryCases('PGlite', pgliteHarness)
