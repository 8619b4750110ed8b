import { describe } from 'vitest'
import { postgresHarness, transactionPoolHarness } from './fixtures/harness.js'
import { runUserLimitCases } from './user-limits.cases.js'

if (process.env['PALISADE_TEST_PG_URL']) {
  runUserLimitCases('PostgreSQL', postgresHarness)
  runUserLimitCases('PostgreSQL, transaction pooling', transactionPoolHarness)
} else describe.skip('user limits over PostgreSQL (set PALISADE_TEST_PG_URL)', () => {})
