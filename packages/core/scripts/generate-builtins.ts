/**
 * Writes src/policy/builtins.generated.ts and refused-builtins.generated.ts from the catalogs of real PostgreSQL servers and the
 * reviewed rules in src/policy/builtin-review.ts.
 *
 *   pnpm --filter @palisade/core exec tsx scripts/generate-builtins.ts [postgres-url ...]
 *
 * PGlite (the embedded server the tests use) is always read; each URL adds a server of another
 * version. Names are the union over all servers read. A volatile built-in that no rule covers
 * stops the generator: someone has to review it and add a rule.
 */
import { writeFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { PGlite } from '@electric-sql/pglite'
import pg from 'pg'
import {
  ALLOWED_EXCEPTIONS,
  ALLOWED_SUPPLEMENT,
  ALLOWED_VOLATILE,
  INTERNAL_TYPES,
  isRefusedTypeName,
  OBJECT_ID_TYPES,
  OPERATOR_SUPPLEMENT,
  REFUSAL_CATEGORIES,
  REFUSED_NAME_PATTERNS,
  REWRITTEN_BY_PROXY,
  type RefusalCategory,
  SQL_SYNTAX_NAMES,
} from '../src/policy/builtin-review.js'

interface FunctionRow {
  name: string
  kind: string
  retset: boolean
  volatility: string
  args: string[]
  result: string
}

interface Catalog {
  version: string
  functions: FunctionRow[]
  operators: string[]
  types: string[]
  informationSchemaTypes: string[]
}

const QUERIES = {
  version: `SELECT current_setting('server_version') AS version`,
  functions: `SELECT p.proname AS name, p.prokind AS kind, p.proretset AS retset,
      p.provolatile AS volatility, r.typname AS result,
      ARRAY(SELECT t.typname::text FROM unnest(p.proargtypes) a JOIN pg_type t ON t.oid = a) AS args
    FROM pg_proc p JOIN pg_type r ON r.oid = p.prorettype
    WHERE p.pronamespace = 'pg_catalog'::regnamespace`,
  operators: `SELECT DISTINCT oprname AS name FROM pg_operator
    WHERE oprnamespace = 'pg_catalog'::regnamespace`,
  // Row types of catalog relations (and arrays of them) are left out: they would describe the
  // upstream's catalogs, which users see only through the virtual catalog.
  types: `SELECT t.typname AS name FROM pg_type t LEFT JOIN pg_type e ON e.oid = t.typelem
    WHERE t.typnamespace = 'pg_catalog'::regnamespace AND t.typtype <> 'c'
      AND coalesce(e.typtype, '') <> 'c'`,
  informationSchemaTypes: `SELECT typname AS name FROM pg_type
    WHERE typnamespace = 'information_schema'::regnamespace AND typtype = 'd'`,
}

type Query = (sql: string) => Promise<Record<string, unknown>[]>

async function readCatalog(query: Query): Promise<Catalog> {
  const names = async (sql: string) => (await query(sql)).map((r) => String(r['name']))
  const [row] = await query(QUERIES.version)
  return {
    version: String(row?.['version']),
    functions: (await query(QUERIES.functions)) as unknown as FunctionRow[],
    operators: await names(QUERIES.operators),
    types: await names(QUERIES.types),
    informationSchemaTypes: await names(QUERIES.informationSchemaTypes),
  }
}

async function readPglite(): Promise<Catalog> {
  const db = new PGlite()
  try {
    return await readCatalog(async (sql) => (await db.query<Record<string, unknown>>(sql)).rows)
  } finally {
    await db.close()
  }
}

async function readServer(url: string): Promise<Catalog> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await readCatalog(async (sql) => (await client.query(sql)).rows)
  } finally {
    await client.end()
  }
}

/** Categories in the order a name is tried against them: the more severe reason wins. */
const CATEGORY_ORDER: readonly RefusalCategory[] = [
  'writes',
  'locks',
  'executes-sql',
  'server-state',
  'probes',
  'internal',
]

function patternCategory(name: string): RefusalCategory | undefined {
  return CATEGORY_ORDER.find((category) =>
    REFUSED_NAME_PATTERNS[category].some((pattern) => pattern.test(name)),
  )
}

/** The category one overload falls in by its signature, or undefined when it is allowed. */
function overloadCategory(fn: FunctionRow): RefusalCategory | 'unreviewed' | undefined {
  const types = [...fn.args, fn.result]
  if (types.some((t) => INTERNAL_TYPES.has(t))) return 'internal'
  // Reading the catalog by OID, or turning a name into an OID (`regclassin('secrets')`).
  const lookup = [...fn.args, fn.result].some((t) => OBJECT_ID_TYPES.has(t))
  if (fn.volatility !== 'i' && lookup) return 'probes'
  if (fn.volatility === 'v' && !ALLOWED_VOLATILE.has(fn.name)) return 'unreviewed'
  return undefined
}

function classify(functions: readonly FunctionRow[]) {
  const byName = new Map<string, FunctionRow[]>()
  for (const fn of functions) byName.set(fn.name, [...(byName.get(fn.name) ?? []), fn])
  const allowed = new Set<string>([
    ...ALLOWED_SUPPLEMENT,
    ...SQL_SYNTAX_NAMES,
    ...REWRITTEN_BY_PROXY,
  ])
  const refused = new Map<RefusalCategory, Set<string>>()
  const unreviewed: string[] = []
  for (const [name, overloads] of byName) {
    if (REWRITTEN_BY_PROXY.has(name) || ALLOWED_EXCEPTIONS.has(name)) {
      allowed.add(name)
      continue
    }
    let category: RefusalCategory | 'unreviewed' | undefined = patternCategory(name)
    // Fail closed: one refused overload refuses the name.
    for (const fn of overloads) category ??= overloadCategory(fn)
    if (category === 'unreviewed') unreviewed.push(name)
    else if (category === undefined) allowed.add(name)
    else refused.set(category, (refused.get(category) ?? new Set()).add(name))
  }
  if (unreviewed.length > 0) {
    throw new Error(`volatile built-ins no rule covers, review them: ${unreviewed.sort()}`)
  }
  const aggregates = new Set(functions.filter((f) => f.kind === 'a' || f.kind === 'w'))
  return {
    allowed,
    refused,
    aggregates: new Set([...aggregates].map((f) => f.name).filter((n) => allowed.has(n))),
    setReturning: new Set(functions.filter((f) => f.retset).map((f) => f.name)),
  }
}

/** A sorted, space-separated list wrapped to lines of at most 100 characters. */
function wordList(names: Iterable<string>): string {
  const lines: string[] = []
  let line = ''
  for (const name of [...new Set(names)].sort()) {
    if (line.length + name.length + 1 > 96) {
      lines.push(line)
      line = ''
    }
    line = line.length === 0 ? name : `${line} ${name}`
  }
  if (line.length > 0) lines.push(line)
  return `\`\n  ${lines.join('\n  ')}\n\``
}

async function main(): Promise<void> {
  const catalogs = [await readPglite()]
  for (const url of process.argv.slice(2)) catalogs.push(await readServer(url))
  const functions = catalogs.flatMap((c) => c.functions)
  const { allowed, refused, aggregates, setReturning } = classify(functions)
  const types = catalogs.flatMap((c) => c.types).filter((t) => !isRefusedTypeName(t))
  const versions = [...new Set(catalogs.map((c) => c.version.split(' ')[0]))].sort()
  const refusedEntries = (Object.keys(REFUSAL_CATEGORIES) as RefusalCategory[]).map(
    (category) =>
      `  ${/^\w+$/.test(category) ? category : `'${category}'`}: ${wordList(refused.get(category) ?? [])},`,
  )
  const header = `// Generated by scripts/generate-builtins.ts from the pg_catalog of PostgreSQL ${versions.join(', ')}
// and the reviewed rules in builtin-review.ts. Do not edit: change a rule and regenerate.
`
  const refusedText = `${header}import type { RefusalCategory } from './builtin-review.js'

/** Built-in functions refused, by the reviewed reason. */
export const REFUSED_FUNCTION_NAMES: Record<RefusalCategory, string> = {
${refusedEntries.join('\n')}
}
`
  const text = `${header}
/** Built-in functions that read only their arguments (and the clock): allowed. */
export const ALLOWED_FUNCTION_NAMES = ${wordList(allowed)}

/** Aggregate and window functions among the allowed ones. */
export const AGGREGATE_FUNCTION_NAMES = ${wordList(aggregates)}

/** Functions with at least one set-returning overload. */
export const SET_RETURNING_FUNCTION_NAMES = ${wordList(setReturning)}

/** Built-in operator names. */
export const OPERATOR_NAMES = ${wordList([...catalogs.flatMap((c) => c.operators), ...OPERATOR_SUPPLEMENT])}

/** Built-in type names, arrays included (object-identifier types have their own guard). */
export const TYPE_NAMES = ${wordList(types)}

/** Domains of information_schema, allowed schema-qualified. */
export const INFORMATION_SCHEMA_TYPE_NAMES = ${wordList(catalogs.flatMap((c) => c.informationSchemaTypes))}
`
  const target = fileURLToPath(new URL('../src/policy/builtins.generated.ts', import.meta.url))
  writeFileSync(target, text)
  const refusedTarget = new URL('../src/policy/refused-builtins.generated.ts', import.meta.url)
  writeFileSync(fileURLToPath(refusedTarget), refusedText)
  console.log(
    `${target}: ${allowed.size} functions allowed, ${[...refused.values()].reduce((n, s) => n + s.size, 0)} refused, from ${versions.join(', ')}`,
  )
}

await main()
