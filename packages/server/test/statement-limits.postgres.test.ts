import { describe } from 'vitest'
import { postgresHarness } from './fixtures/harness.js'
import { runStatementLimitCases } from './statement-limits.cases.js'

if (process.env['PALISADE_TEST_PG_URL']) runStatementLimitCases('PostgreSQL', postgresHarness)
else describe.skip('statement limits over PostgreSQL (set PALISADE_TEST_PG_URL)', () => {})
