import { existsSync } from 'node:fs'
import { createRequire } from 'node:module'
import { fileURLToPath, pathToFileURL } from 'node:url'

/**
 * A worker script for `new Worker`: the built file next to the bundle, or, when running from the
 * TypeScript sources (the test runner), a bootstrap that registers tsx in the worker and imports
 * the source. Both locations are given by the caller, relative to its own module.
 */
export function workerEntry(built: URL, source: URL): { url: URL | string; eval: boolean } {
  if (existsSync(fileURLToPath(built))) return { url: built, eval: false }
  // The ESM build of tsx's API sits beside the CommonJS one that require.resolve finds.
  const tsxApi = createRequire(import.meta.url)
    .resolve('tsx/esm/api')
    .replace(/\.cjs$/, '.mjs')
  const tsx = pathToFileURL(tsxApi).href
  const bootstrap = `import(${JSON.stringify(tsx)}).then((t) => { t.register(); return import(${JSON.stringify(source.href)}) })`
  return { url: bootstrap, eval: true }
}
