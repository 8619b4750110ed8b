import { defineConfig } from 'tsup'

/**
 * The web console (docs/console.md): one browser bundle and one stylesheet, served by the admin
 * API at /ui. Built after the server (`tsup` cleans dist first), into dist/console.
 */
export default defineConfig({
  entry: { app: 'console/main.tsx' },
  outDir: 'dist/console',
  format: ['esm'],
  platform: 'browser',
  target: 'es2022',
  minify: true,
  sourcemap: false,
  clean: true,
  noExternal: [/.*/],
  tsconfig: 'console/tsconfig.json',
  esbuildOptions(options) {
    options.jsx = 'automatic'
    options.jsxImportSource = 'preact'
  },
})
