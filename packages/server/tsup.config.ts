import { defineConfig } from 'tsup'

export default defineConfig([
  {
    entry: ['src/index.ts'],
    format: ['esm'],
    dts: true,
    sourcemap: true,
    // The two builds run together: the library build must not delete the CLI's output.
    clean: ['!cli.js', '!cli.js.map'],
    target: 'node20',
  },
  {
    // The `palisade` command.
    entry: { cli: 'src/cli/main.ts' },
    format: ['esm'],
    sourcemap: true,
    target: 'node20',
    banner: { js: '#!/usr/bin/env node' },
  },
])
