import { describe } from 'vitest'
import { postgresHarness, transactionPoolHarness } from './fixtures/harness.js'
import { runStatementLimitCases } from './statement-limits.cases.js'

if (process.env['PALISADE_TEST_PG_URL']) {
  runStatementLimitCases('PostgreSQL', postgresHarness)
  runStatementLimitCases('PostgreSQL, transaction pooling', transactionPoolHarness)
} else describe.skip('statement limits over PostgreSQL (set PALISADE_TEST_PG_URL)', () => {})
