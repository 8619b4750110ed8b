import { PalisadeError, UndefinedTableError, UnsupportedStatementError } from '../errors.js'
import { isAllowedType } from '../policy/type-allowlist.js'
import type { CompiledSession, TableEntry } from '../session/compiled-session.js'
import { SqlState } from '../sqlstate.js'
import { isVirtualPgCatalogRelation } from '../virtual-catalog/pg-catalog.js'
import { DEFAULT_SERVER_VERSION } from '../virtual-catalog/pg-catalog-columns.js'
import { parseQualifiedName, quoteName } from './qualified-name.js'

/** The upstream text for a name read as `type`, or the error a missing name gets. */
export function objectName(session: CompiledSession, text: string, type: string): string {
  const names = parseQualifiedName(text)
  if (type === 'regtype') {
    if (!names || !isAllowedType(names)) throw undefinedType([text])
    return text
  }
  if (!names) throw new PalisadeError(SqlState.InvalidName, 'invalid name syntax')
  if (type === 'regnamespace') {
    if (names.length !== 1) throw new PalisadeError(SqlState.InvalidName, 'invalid name syntax')
    const name = names[0] as string
    if (name === 'pg_catalog' || name === 'information_schema') {
      return name
    }
    return quoteName(visibleSchema(session, name))
  }
  if (type !== 'regclass') return systemObjectName(session, type, text, names)
  const [catalog, schema, table] = (
    names.length === 3
      ? names
      : names.length === 2
        ? [undefined, ...names]
        : [undefined, undefined, names[0]]
  ) as [string | undefined, string | undefined, string]
  if (catalog !== undefined && catalog !== session.datasource.name) {
    throw new PalisadeError(
      SqlState.FeatureNotSupported,
      `cross-database references are not implemented: "${text}"`,
    )
  }
  if ((schema === 'pg_catalog' || schema === undefined) && isVirtualPgCatalogRelation(table)) {
    return `pg_catalog.${table}`
  }
  // PostgreSQL's answers for a missing name, worded from the folded name as it prints them:
  // before 16, a missing schema is reported as such; from 16 on, as a missing relation.
  const version = session.datasource.serverVersion ?? DEFAULT_SERVER_VERSION
  const systemSchema = schema === 'pg_catalog' || schema === 'information_schema'
  if (schema !== undefined && !systemSchema && version < 160000) visibleSchema(session, schema)
  const entry = session.findTable(schema, table)
  if (!entry?.plan) {
    const written = version < 160000 ? [schema, table].filter(Boolean) : names
    throw new UndefinedTableError(written.join('.'))
  }
  return `${quoteName(entry.exposed.schema)}.${quoteName(entry.exposed.name)}`
}

/**
 * A name for the other `reg*` types, which the user can only resolve to built-in objects:
 * the upstream session's search path is empty, so an unqualified (or `pg_catalog`) name finds
 * `pg_catalog` objects only and passes unchanged. A name in another schema is refused as
 * PostgreSQL refuses a missing one, whether or not the schema or the object exists upstream.
 */
function systemObjectName(
  session: CompiledSession,
  type: string,
  text: string,
  names: readonly string[],
): string {
  const system = names.length === 1 || (names.length === 2 && names[0] === 'pg_catalog')
  switch (type) {
    case 'regproc':
    case 'regoper': {
      if (system) return text
      const version = session.datasource.serverVersion ?? DEFAULT_SERVER_VERSION
      if (names.length === 2 && version < 160000) visibleSchema(session, names[0] as string)
      const name = names.join('.')
      throw new PalisadeError(
        SqlState.UndefinedFunction,
        type === 'regproc'
          ? `function "${name}" does not exist`
          : `operator does not exist: ${name}`,
      )
    }
    case 'regprocedure':
    case 'regoperator':
      // Argument types are names too: only built-in ones, written without other schemas.
      if (!/["]/.test(text) && !text.replaceAll('pg_catalog.', '').includes('.')) return text
      break
    case 'regcollation':
    case 'regconfig':
    case 'regdictionary':
      if (system) return text
      break
  }
  throw new UnsupportedStatementError(`casts to ${type} of anything but a built-in name`)
}

/**
 * The upstream name of a schema the user can see. A schema exists for this user only when it
 * holds a relation they may see (as in the virtual pg_namespace): one whose every table is
 * hidden answers like a missing one (3F000).
 */
export function visibleSchema(session: CompiledSession, name: string): string {
  const schema = session.schemas.get(name)
  if (!schema || !someVisible(schema.tables.values())) {
    throw new PalisadeError(SqlState.InvalidSchemaName, `schema "${name}" does not exist`)
  }
  return schema.upstream
}

/** Whether any of the entries is visible; stops at the first (entries are built as read). */
function someVisible(entries: Iterable<TableEntry>): boolean {
  for (const entry of entries) if (entry.plan !== null) return true
  return false
}

/** PostgreSQL's wording for a type that does not exist (42704). */
export function undefinedType(names: readonly string[]): PalisadeError {
  return new PalisadeError(SqlState.UndefinedObject, `type "${names.join('.')}" does not exist`)
}
