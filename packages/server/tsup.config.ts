import { defineConfig } from 'tsup'

export default defineConfig({
  // The library and the `palisade` command (whose source starts with its `#!` line) share their
  // code as chunks, so an install carries it once.
  entry: { index: 'src/index.ts', cli: 'src/cli/main.ts' },
  format: ['esm'],
  dts: { entry: { index: 'src/index.ts' } },
  sourcemap: true,
  clean: true,
  target: 'node20',
})
