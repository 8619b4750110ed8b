import { describe } from 'vitest'
import { postgresHarness } from './fixtures/harness.js'
import { runProtocolStrictnessCases } from './protocol-strictness.cases.js'

if (process.env['PALISADE_TEST_PG_URL']) runProtocolStrictnessCases('PostgreSQL', postgresHarness)
else describe.skip('protocol strictness over PostgreSQL (set PALISADE_TEST_PG_URL)', () => {})
