import { describe } from 'vitest'
import { postgresHarness, transactionPoolHarness } from './fixtures/harness.js'
import { runShadowingCases } from './shadowing.cases.js'

if (process.env['PALISADE_TEST_PG_URL']) {
  runShadowingCases('PostgreSQL', postgresHarness)
  runShadowingCases('PostgreSQL, transaction pooling', transactionPoolHarness)
} else describe.skip('shadowing over PostgreSQL (set PALISADE_TEST_PG_URL to run)', () => {})
