import { describe } from 'vitest'
import { postgresHarness, transactionPoolHarness } from './fixtures/harness.js'
import { runShadowModeCases } from './shadow-mode.cases.js'

if (process.env['PALISADE_TEST_PG_URL']) {
  runShadowModeCases('PostgreSQL', postgresHarness)
  runShadowModeCases('PostgreSQL, transaction pooling', transactionPoolHarness)
} else describe.skip('shadow policies over PostgreSQL (set PALISADE_TEST_PG_URL to run)', () => {})
