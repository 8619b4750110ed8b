import { describe } from 'vitest'
import { postgresHarness, transactionPoolHarness } from './fixtures/harness.js'
import { runRobustnessCases, runUpstreamRestartCase } from './robustness.cases.js'

if (process.env['PALISADE_TEST_PG_URL']) {
  runRobustnessCases('PostgreSQL', postgresHarness)
  runRobustnessCases('PostgreSQL, transaction pooling', transactionPoolHarness)
  runUpstreamRestartCase(postgresHarness)
  runUpstreamRestartCase(transactionPoolHarness, 'PostgreSQL, transaction pooling')
} else {
  describe.skip('robustness over PostgreSQL (set PALISADE_TEST_PG_URL to run)', () => {})
}
