import { availableParallelism } from 'node:os'
import { defineConfig } from 'vitest/config'
import LongestFirstSequencer from './vitest.sequencer.js'
import projects from './vitest.workspace.js'

export default defineConfig({
  test: {
    projects,
    // Vitest's default is one worker fewer than the cores: a single worker on a 2-core CI
    // machine, where most files leave a core idle (they wait on sockets, PostgreSQL, Chromium or
    // PGlite's thread). Two workers at least; `--maxWorkers` still overrides.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    sequence: { sequencer: LongestFirstSequencer },
  },
})
