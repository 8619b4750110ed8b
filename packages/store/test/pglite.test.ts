import { describe } from 'vitest'
import { createTestStore } from './fixtures/pglite.js'
import { runResourceStoreCases } from './resource-store.cases.js'

describe('store on embedded PGlite', () => {
  // PGlite is single-connection: concurrent calls are serialized, so races are simulated only.
  runResourceStoreCases((options) => createTestStore(options), { realConcurrency: false })
})
