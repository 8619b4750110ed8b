import { defineConfig } from 'tsup'

export default defineConfig({
  // The embedded store's thread and the PostgreSQL store's audit thread are files of their own
  // next to the bundle (`new Worker`).
  entry: {
    index: 'src/index.ts',
    'pglite-thread': 'src/drivers/pglite-thread.ts',
    'postgres-audit-thread': 'src/drivers/postgres-audit-thread.ts',
  },
  format: ['esm'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
})
