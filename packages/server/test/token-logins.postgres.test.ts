import { describe } from 'vitest'
import { postgresHarness } from './fixtures/harness.js'
import { runTokenLoginCases } from './token-logins.cases.js'

if (process.env['PALISADE_TEST_PG_URL']) runTokenLoginCases('PostgreSQL', postgresHarness)
else describe.skip('token logins over PostgreSQL (set PALISADE_TEST_PG_URL to run)', () => {})
