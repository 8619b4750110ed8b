import { describe } from 'vitest'
import { postgresHarness, transactionPoolHarness } from './fixtures/harness.js'
import { runPolicyKindCases } from './policy-kinds.cases.js'

if (process.env['PALISADE_TEST_PG_URL']) {
  runPolicyKindCases('PostgreSQL', postgresHarness)
  runPolicyKindCases('PostgreSQL, transaction pooling', transactionPoolHarness)
} else describe.skip('policy kinds over PostgreSQL (set PALISADE_TEST_PG_URL to run)', () => {})
