import { describe } from 'vitest'
import { postgresHarness, transactionPoolHarness } from './fixtures/harness.js'
import { runTagCases } from './tags.cases.js'

if (process.env['PALISADE_TEST_PG_URL']) {
  runTagCases('PostgreSQL', postgresHarness)
  runTagCases('PostgreSQL, transaction pooling', transactionPoolHarness)
} else
  describe.skip('tag-targeted policies over PostgreSQL (set PALISADE_TEST_PG_URL to run)', () => {})
