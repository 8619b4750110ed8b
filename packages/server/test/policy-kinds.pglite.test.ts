import { pgliteHarness } from './fixtures/harness.js'
import { runPolicyKindCases } from './policy-kinds.cases.js'

runPolicyKindCases('PGlite', pgliteHarness)
