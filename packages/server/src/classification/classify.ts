import type { ClassifiedColumn, Store, TagProposal } from '@palisade/store'
import {
  DISCOVERY_TIMEOUTS,
  openUpstreamReader,
  type UpstreamReader,
} from '../upstream/upstream-reader.js'
import { classifyColumn, DETECTORS } from './detectors.js'

/** Rows read per table: enough to judge a column, bounded so a large table costs one page. */
export const SAMPLE_ROWS = 200
/** Tables one classification looks at, at most. */
const MAX_TABLES = 1000
/** Tables sampled by one statement. */
const TABLES_PER_SAMPLE = 25

/** What one classification did (the values it read are never kept). */
export interface ClassificationResult {
  proposals: TagProposal[]
  scanned_columns: number
  sampled: boolean
}

const ident = (name: string) => `"${name.replace(/"/g, '""')}"`

interface StoredTable {
  schema: string
  table: string
  columns: { name: string; type: string }[]
}

/** Exposed tables and columns of the stored catalog that a detector could apply to. */
async function candidates(store: Store, datasourceId: string): Promise<StoredTable[]> {
  const view = await store.catalog.get(datasourceId)
  const out: StoredTable[] = []
  for (const s of view.schemas) {
    if (!s.is_selected) continue
    for (const t of s.tables) {
      if (!t.is_selected || t.table_type !== 'TABLE') continue
      const columns = t.columns
        .filter((c) => c.is_selected && DETECTORS.some((d) => d.types(c.data_type)))
        .map((c) => ({ name: c.column_name, type: c.data_type }))
      if (columns.length > 0) out.push({ schema: s.schema_name, table: t.table_name, columns })
    }
  }
  return out.slice(0, MAX_TABLES)
}

/** The bounded read of one table's candidate columns, as text (`c0`, `c1`… in column order). */
const sampleQuery = (t: StoredTable) =>
  `SELECT ${t.columns.map((c, i) => `${ident(c.name)}::text AS c${i}`).join(', ')}
   FROM ${ident(t.schema)}.${ident(t.table)} LIMIT ${SAMPLE_ROWS}`

/** Non-null values of each column of the sampled rows. */
function valuesOf(t: StoredTable, rows: Record<string, string | null>[]): Map<string, string[]> {
  const out = new Map<string, string[]>()
  t.columns.forEach((c, i) => {
    out.set(
      c.name,
      rows.map((r) => r[`c${i}`]).filter((v): v is string => v !== null && v !== undefined),
    )
  })
  return out
}

/**
 * The samples of several tables in one statement (a JSON array of rows per table), so a
 * classification of a thousand tables costs a few dozen round trips, not a thousand. When that
 * statement fails (a table dropped or not readable), each table is read alone and one that
 * fails is classified by name only.
 */
async function sampleTables(
  reader: UpstreamReader,
  tables: readonly StoredTable[],
): Promise<(Map<string, string[]> | null)[]> {
  const columns = tables.map(
    (t, i) => `(SELECT pg_catalog.json_agg(x) FROM (${sampleQuery(t)}) x)::text AS t${i}`,
  )
  try {
    const [row] = await reader.query<Record<string, string | null>>(`SELECT ${columns.join(', ')}`)
    return tables.map((t, i) => valuesOf(t, JSON.parse(row?.[`t${i}`] ?? 'null') ?? []))
  } catch {
    const out: (Map<string, string[]> | null)[] = []
    for (const t of tables) {
      out.push(
        await reader.query<Record<string, string | null>>(sampleQuery(t)).then(
          (rows) => valuesOf(t, rows),
          () => null,
        ),
      )
    }
    return out
  }
}

/**
 * Classifies a datasource's exposed columns by name and, unless the datasource turned sampling
 * off, by a bounded sample of values read upstream with its own connection; stores the new
 * proposals for an admin to accept or reject. Sampled values stay in this function.
 */
export async function classifyDatasource(
  store: Store,
  datasourceId: string,
  actorId: string,
  signal?: AbortSignal,
): Promise<ClassificationResult> {
  const ds = await store.datasources.get(datasourceId)
  const tables = await candidates(store, datasourceId)
  const sampled = ds.classification_sampling && tables.length > 0
  let reader: UpstreamReader | undefined
  const found: ClassifiedColumn[] = []
  try {
    if (sampled) {
      reader = await openUpstreamReader(
        await store.datasources.getConnection(datasourceId),
        DISCOVERY_TIMEOUTS,
        signal,
      )
    }
    for (let start = 0; start < tables.length; start += TABLES_PER_SAMPLE) {
      const batch = tables.slice(start, start + TABLES_PER_SAMPLE)
      const samples = reader ? await sampleTables(reader, batch) : []
      batch.forEach((t, i) => {
        classifyTable(t, samples[i] ?? null, found)
      })
    }
  } finally {
    await reader?.close()
  }
  const proposals = await store.catalogTags.propose(datasourceId, found, actorId)
  return {
    proposals,
    scanned_columns: tables.reduce((n, t) => n + t.columns.length, 0),
    sampled,
  }
}

/** Adds what the detectors find in one table's columns (by name, and by values when sampled). */
function classifyTable(
  t: StoredTable,
  values: Map<string, string[]> | null,
  found: ClassifiedColumn[],
): void {
  for (const c of t.columns) {
    for (const v of classifyColumn(c, values?.get(c.name) ?? null)) {
      found.push({
        schema_name: t.schema,
        table_name: t.table,
        column_name: c.name,
        tag: v.tag,
        confidence: v.confidence,
        evidence: v.evidence,
      })
    }
  }
}
