import { describe } from 'vitest'
import { postgresHarness, transactionPoolHarness } from './fixtures/harness.js'
import { runRefusedMessageCases } from './refused-messages.cases.js'

if (process.env['PALISADE_TEST_PG_URL']) {
  runRefusedMessageCases('PostgreSQL', postgresHarness)
  runRefusedMessageCases('PostgreSQL, transaction pooling', transactionPoolHarness)
} else describe.skip('refused messages over PostgreSQL (set PALISADE_TEST_PG_URL)', () => {})
