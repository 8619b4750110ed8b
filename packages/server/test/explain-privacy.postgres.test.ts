import { describe } from 'vitest'
import { runExplainPrivacyCases } from './explain-privacy.cases.js'
import { postgresHarness, transactionPoolHarness } from './fixtures/harness.js'

if (process.env['PALISADE_TEST_PG_URL']) {
  runExplainPrivacyCases('PostgreSQL', postgresHarness)
  runExplainPrivacyCases('PostgreSQL, transaction pooling', transactionPoolHarness)
} else describe.skip('EXPLAIN privacy over PostgreSQL (set PALISADE_TEST_PG_URL to run)', () => {})
