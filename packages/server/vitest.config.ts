import { defineProject } from 'vitest/config'

export default defineProject({
  test: {
    name: 'server',
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/fixtures/global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
})
