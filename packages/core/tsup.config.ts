import { defineConfig } from 'tsup'

export default defineConfig({
  // The workers are files of their own next to the bundle (loaded with `new Worker`).
  entry: {
    index: 'src/index.ts',
    'decision-worker': 'src/decision/decision-worker.ts',
    'rewrite-worker': 'src/isolation/rewrite-worker.ts',
  },
  format: ['esm'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
})
