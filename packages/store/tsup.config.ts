import { defineConfig } from 'tsup'

export default defineConfig({
  // The embedded store's thread is a file of its own next to the bundle (`new Worker`).
  entry: { index: 'src/index.ts', 'pglite-thread': 'src/drivers/pglite-thread.ts' },
  format: ['esm'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
})
