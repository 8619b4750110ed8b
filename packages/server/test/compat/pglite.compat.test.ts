import { pgliteHarness } from '../fixtures/harness.js'
import { runCompatCases } from './compat.cases.js'

runCompatCases('PGlite', pgliteHarness)
