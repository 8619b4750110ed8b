import { describe } from 'vitest'
import { runDeniedColumnSpellingCases } from './denied-column-spellings.cases.js'
import { postgresHarness, transactionPoolHarness } from './fixtures/harness.js'

if (process.env['PALISADE_TEST_PG_URL']) {
  runDeniedColumnSpellingCases('PostgreSQL', postgresHarness)
  runDeniedColumnSpellingCases('PostgreSQL, transaction pooling', transactionPoolHarness)
} else
  describe.skip('denied column spellings over PostgreSQL (set PALISADE_TEST_PG_URL to run)', () => {})
