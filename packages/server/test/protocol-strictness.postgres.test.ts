import { describe } from 'vitest'
import { postgresHarness, transactionPoolHarness } from './fixtures/harness.js'
import { runProtocolStrictnessCases } from './protocol-strictness.cases.js'

if (process.env['PALISADE_TEST_PG_URL']) {
  runProtocolStrictnessCases('PostgreSQL', postgresHarness)
  runProtocolStrictnessCases('PostgreSQL, transaction pooling', transactionPoolHarness)
} else describe.skip('protocol strictness over PostgreSQL (set PALISADE_TEST_PG_URL)', () => {})
