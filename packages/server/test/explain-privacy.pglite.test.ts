import { runExplainPrivacyCases } from './explain-privacy.cases.js'
import { pgliteHarness } from './fixtures/harness.js'

runExplainPrivacyCases('PGlite', pgliteHarness)
