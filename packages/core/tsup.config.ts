import { defineConfig } from 'tsup'

export default defineConfig({
  // The decision worker is its own file next to the bundle (loaded with `new Worker`).
  entry: { index: 'src/index.ts', 'decision-worker': 'src/decision/decision-worker.ts' },
  format: ['esm'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
})
