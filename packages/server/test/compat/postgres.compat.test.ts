import { describe, it } from 'vitest'
import { postgresHarness, transactionPoolHarness } from '../fixtures/harness.js'
import { runCompatCases } from './compat.cases.js'

if (process.env['PALISADE_TEST_PG_URL']) {
  runCompatCases('PostgreSQL', postgresHarness)
  runCompatCases('PostgreSQL, transaction pooling', transactionPoolHarness)
} else {
  describe('client compatibility over PostgreSQL', () => {
    it.skip('needs PALISADE_TEST_PG_URL (a PostgreSQL server to create a scratch database on)', () => {})
  })
}
