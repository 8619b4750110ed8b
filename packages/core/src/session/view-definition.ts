import { mapTree, walkTree } from '../ast/map-tree.js'
import { type AstNode, type Pg, tagOf } from '../ast/node.js'
import { parseSql } from '../ast/parse.js'
import type { CatalogTable, RelationName } from '../catalog.types.js'
import { isPalisadeError } from '../errors.js'
import { isVirtualPgCatalogRelation } from '../virtual-catalog/pg-catalog.js'

/**
 * What a relation other than a plain table is to the rewrite, before any user's policies:
 *
 * - `expand`: a view whose definition Palisade reads itself. Every scan of it is replaced by
 *   its defining query (relations renamed to the names users see), so the querying user's
 *   policies reach the base relations, as in a PostgreSQL security-invoker view.
 * - `opaque`: a relation Palisade cannot read through (materialized views hold their own rows,
 *   foreign tables read elsewhere, a definition that is missing, does not parse or reads a
 *   relation that is not exposed). The fail-closed rule (view-resolution.ts) decides per user.
 */
export type ViewDefinition =
  | { readonly kind: 'expand'; readonly body: AstNode }
  | {
      readonly kind: 'opaque'
      readonly reason: string
      /** Upstream relations it reads, or `unknown` when nothing can be said. */
      readonly reads: readonly RelationName[] | 'unknown'
    }

/** Finds an exposed relation by its upstream names; returns the schema name users see. */
export type ExposedLookup = (schema: string, table: string) => string | undefined

const SYSTEM_SCHEMAS = new Set(['pg_catalog', 'information_schema'])

/** The static expansion of one catalog relation, or undefined for a plain table. */
export function viewDefinitionOf(
  table: CatalogTable,
  exposed: ExposedLookup,
): ViewDefinition | undefined {
  const kind = table.kind ?? 'TABLE'
  if (kind === 'TABLE') return undefined
  if (kind === 'FOREIGN TABLE') {
    return { kind: 'opaque', reason: 'foreign table: what it reads is unknown', reads: 'unknown' }
  }
  const query = parseDefinition(table.definition)
  const opaque = (reason: string, direct?: readonly RelationName[]): ViewDefinition => ({
    kind: 'opaque',
    reason,
    reads: table.reads ?? direct ?? 'unknown',
  })
  if (!query) return opaque('its definition is unknown or cannot be parsed')
  const direct = directReads(query)
  if (kind === 'MATERIALIZED VIEW') {
    return opaque('materialized view: its rows are stored, not read through policies', direct.reads)
  }
  if (direct.problem) return opaque(direct.problem, direct.reads)
  const renamed = new Map<string, string>()
  for (const read of direct.reads) {
    const visible = exposed(read.schema, read.table)
    if (visible === undefined) {
      return opaque(`reads ${read.schema}.${read.table}, which is not exposed`, direct.reads)
    }
    renamed.set(read.schema, visible)
  }
  const body = mapTree(query, (_node, tag, b) => {
    if (tag !== 'RangeVar') return undefined
    const rv = b as Pg.RangeVar
    const visible = rv.schemaname === undefined ? undefined : renamed.get(rv.schemaname)
    if (visible === undefined || visible === rv.schemaname) return undefined
    return { RangeVar: { ...rv, schemaname: visible } }
  })
  return { kind: 'expand', body }
}

/** The definition's SELECT, or undefined when there is none or it is not a single SELECT. */
function parseDefinition(definition: string | null | undefined): AstNode | undefined {
  if (!definition) return undefined
  try {
    const statements = parseSql(definition)
    const only = statements.length === 1 ? statements[0]?.stmt : undefined
    return tagOf(only) === 'SelectStmt' ? only : undefined
  } catch (error) {
    if (isPalisadeError(error)) return undefined
    throw error
  }
}

/**
 * The user relations a definition names. Definitions are printed with an empty search path,
 * so every user relation is schema-qualified; a bare name is a CTE or a system catalog, and
 * anything else is refused rather than guessed.
 */
function directReads(query: AstNode): { reads: RelationName[]; problem: string | undefined } {
  const ctes = new Set<string>()
  walkTree(query, (tag, body) => {
    if (tag === 'CommonTableExpr') ctes.add((body as Pg.CommonTableExpr).ctename ?? '')
    return true
  })
  const reads: RelationName[] = []
  const seen = new Set<string>()
  let problem: string | undefined
  walkTree(query, (tag, body) => {
    if (tag !== 'RangeVar') return true
    const rv = body as Pg.RangeVar
    const name = rv.relname ?? ''
    if (rv.catalogname !== undefined) problem ??= `reads ${name} in another database`
    else if (rv.schemaname === undefined) {
      if (!ctes.has(name) && !isVirtualPgCatalogRelation(name))
        problem ??= `reads ${name} without a schema`
    } else if (!SYSTEM_SCHEMAS.has(rv.schemaname)) {
      const key = `${rv.schemaname}.${name}`
      if (!seen.has(key)) {
        seen.add(key)
        reads.push({ schema: rv.schemaname, table: name })
      }
    }
    return false
  })
  return { reads, problem }
}
