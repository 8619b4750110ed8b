import { describe } from 'vitest'
import { postgresHarness, transactionPoolHarness } from './fixtures/harness.js'
import { runStaleCursorCases } from './stale-cursors.cases.js'

if (process.env['PALISADE_TEST_PG_URL']) {
  runStaleCursorCases('PostgreSQL', postgresHarness)
  runStaleCursorCases('PostgreSQL, transaction pooling', transactionPoolHarness)
} else
  describe.skip('cursors across access changes over PostgreSQL (set PALISADE_TEST_PG_URL)', () => {})
