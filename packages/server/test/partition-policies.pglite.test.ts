import { pgliteHarness } from './fixtures/harness.js'
import { runPartitionPolicyCases } from './partition-policies.cases.js'

runPartitionPolicyCases('PGlite', pgliteHarness)
