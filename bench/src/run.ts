/**
 * `pnpm bench [name...]` runs the named benchmarks (all when none are named) and prints their tables.
 * Each benchmark module exports `run(): Promise<void>`; sibling packages are imported from `dist`.
 * A group's name runs its members in order.
 */
const benchmarks: Record<string, () => Promise<{ run: () => Promise<void> }>> = {
  rewrite: () => import('./rewrite.js'),
  shadow: () => import('./shadow.js'),
  decision: () => import('./decision.js'),
  fence: () => import('./fence.js'),
  store: () => import('./store.js'),
  proxy: () => import('./proxy.js'),
  invalidation: () => import('./invalidation.js'),
  isolation: () => import('./isolation.js'),
  logins: () => import('./logins.js'),
  pgbench: () => import('./pgbench.js'),
  pooling: () => import('./pooling.js'),
  memory: () => import('./memory.js'),
  'catalog-discovery': () => import('./catalog.js'),
  'wide-login': () => import('./wide-login.js'),
  'catalog-browsing': () => import('./catalog-browsing.js'),
  'install-size': () => import('./install-size.js'),
}

/** `catalog`: everything a wide catalog costs, at the same sizes (`BENCH_CATALOG_TABLES`). */
const groups: Record<string, string[]> = {
  catalog: ['catalog-discovery', 'wide-login', 'catalog-browsing'],
}

const wanted = process.argv.slice(2)
const names = [
  ...new Set(
    (wanted.length > 0 ? wanted : Object.keys(benchmarks)).flatMap((n) => groups[n] ?? [n]),
  ),
]
for (const name of names) {
  const load = benchmarks[name]
  if (!load) {
    const known = [...Object.keys(benchmarks), ...Object.keys(groups)]
    console.error(`unknown benchmark "${name}"; known: ${known.join(', ')}`)
    process.exit(2)
  }
  console.log(`\n## ${name}\n`)
  await (await load()).run()
}
