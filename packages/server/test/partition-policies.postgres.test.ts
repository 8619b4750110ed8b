import { describe } from 'vitest'
import { postgresHarness, transactionPoolHarness } from './fixtures/harness.js'
import { runPartitionPolicyCases } from './partition-policies.cases.js'

if (process.env['PALISADE_TEST_PG_URL']) {
  runPartitionPolicyCases('PostgreSQL', postgresHarness)
  runPartitionPolicyCases('PostgreSQL, transaction pooling', transactionPoolHarness)
} else
  describe.skip('partition policies over PostgreSQL (set PALISADE_TEST_PG_URL to run)', () => {})
