import { pgliteHarness } from './fixtures/harness.js'
import { runProtocolStrictnessCases } from './protocol-strictness.cases.js'

runProtocolStrictnessCases('PGlite', pgliteHarness)
