import { describe } from 'vitest'
import { postgresHarness, transactionPoolHarness } from './fixtures/harness.js'
import { runViewCases } from './views.cases.js'

if (process.env['PALISADE_TEST_PG_URL']) {
  runViewCases('PostgreSQL', postgresHarness)
  runViewCases('PostgreSQL, transaction pooling', transactionPoolHarness)
} else describe.skip('views over PostgreSQL (set PALISADE_TEST_PG_URL to run)', () => {})
