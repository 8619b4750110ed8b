import { runDeniedColumnSpellingCases } from './denied-column-spellings.cases.js'
import { pgliteHarness } from './fixtures/harness.js'

runDeniedColumnSpellingCases('PGlite', pgliteHarness)
