import { pgliteHarness } from './fixtures/harness.js'
import { runRefusedMessageCases } from './refused-messages.cases.js'

runRefusedMessageCases('PGlite', pgliteHarness)
