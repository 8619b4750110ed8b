import { describe } from 'vitest'
import { postgresHarness, transactionPoolHarness } from './fixtures/harness.js'
import { runMaskLibraryCases } from './mask-library.cases.js'

if (process.env['PALISADE_TEST_PG_URL']) {
  runMaskLibraryCases('PostgreSQL', postgresHarness)
  runMaskLibraryCases('PostgreSQL, transaction pooling', transactionPoolHarness)
} else describe.skip('library masks over PostgreSQL (set PALISADE_TEST_PG_URL to run)', () => {})
