import { describe } from 'vitest'
import { postgresHarness, transactionPoolHarness } from './fixtures/harness.js'
import { runTimeBoundAccessCases } from './time-bound-access.cases.js'

if (process.env['PALISADE_TEST_PG_URL']) {
  runTimeBoundAccessCases('PostgreSQL', postgresHarness)
  runTimeBoundAccessCases('PostgreSQL, transaction pooling', transactionPoolHarness)
} else
  describe.skip('time-bound access over PostgreSQL (set PALISADE_TEST_PG_URL to run)', () => {})
