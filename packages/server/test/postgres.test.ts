import { describe, it } from 'vitest'
import { postgresHarness, transactionPoolHarness } from './fixtures/harness.js'
import { runPgwireCases } from './pgwire.cases.js'

if (process.env['PALISADE_TEST_PG_URL']) {
  runPgwireCases('PostgreSQL', postgresHarness)
  runPgwireCases('PostgreSQL, transaction pooling', transactionPoolHarness)
} else {
  describe('data plane over PostgreSQL', () => {
    it.skip('needs PALISADE_TEST_PG_URL (a PostgreSQL server to create a scratch database on)', () => {})
  })
}
