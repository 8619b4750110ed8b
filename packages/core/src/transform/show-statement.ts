import { deparseStatement } from '../ast/deparse.js'
import {
  type AstNode,
  bodyOf,
  columnRef,
  type Pg,
  resTarget,
  selectStmt,
  stringConst,
  stringNode,
  typeCast,
} from '../ast/node.js'
import { PalisadeError } from '../errors.js'
import type { CompiledSession } from '../session/compiled-session.js'
import { SqlState } from '../sqlstate.js'

/** Parameters SHOW may read (docs/statements.md); lowercase, as the parser folds them. */
export const SHOWABLE_PARAMETERS: readonly string[] = [
  'server_version',
  'server_encoding',
  'client_encoding',
  'datestyle',
  'intervalstyle',
  'timezone',
  'integer_datetimes',
  'standard_conforming_strings',
  'search_path',
  'transaction_isolation',
  'transaction_read_only',
  'statement_timeout',
  'application_name',
  'max_identifier_length',
]

/**
 * SHOW is answered from a fixed set: `search_path` from the session's default schema,
 * `SHOW TABLES` from the visible catalog, `SHOW ALL` as the fixed set only, the rest by the
 * upstream. Anything else is 42704, as PostgreSQL says for an unknown parameter.
 */
export function rewriteShow(stmt: AstNode, session: CompiledSession): { sql: string } {
  const name = (bodyOf<Pg.VariableShowStmt>(stmt, 'VariableShowStmt')?.name ?? '').toLowerCase()
  if (name === 'search_path') {
    return {
      sql: deparseStatement(
        selectStmt({
          targets: [
            resTarget(typeCast(stringConst(session.defaultSchema ?? ''), 'text'), 'search_path'),
          ],
          from: [],
        }),
      ),
    }
  }
  if (name === 'tables') return { sql: deparseStatement(showTables(session)) }
  if (name === 'all') return { sql: deparseStatement(showAll(session)) }
  if (SHOWABLE_PARAMETERS.includes(name)) return { sql: deparseStatement(stmt) }
  throw new PalisadeError(
    SqlState.UndefinedObject,
    `unrecognized configuration parameter "${name}"`,
  )
}

function valuesTable(rows: AstNode[][], alias: string, columns: string[]): AstNode {
  return {
    RangeSubselect: {
      subquery: {
        SelectStmt: {
          valuesLists: rows.map((row) => ({ List: { items: row } })),
          limitOption: 'LIMIT_OPTION_DEFAULT',
          op: 'SETOP_NONE',
        },
      },
      alias: { aliasname: alias, colnames: columns.map(stringNode) },
    },
  }
}

function showTables(session: CompiledSession): AstNode {
  const rows = [...session.visibleRelations()].map((relation) => [
    stringConst(relation.visibleSchema),
    stringConst(relation.name),
  ])
  const columns = ['table_schema', 'table_name']
  if (rows.length === 0) {
    const nulls = columns.map((c) => resTarget(typeCast({ A_Const: { isnull: true } }, 'text'), c))
    return selectStmt({
      targets: nulls,
      from: [],
      where: { A_Const: { boolval: { boolval: false } } },
    })
  }
  return selectStmt({
    targets: columns.map((c) => resTarget(columnRef(c))),
    from: [valuesTable(rows, 'visible_tables', columns)],
  })
}

function showAll(session: CompiledSession): AstNode {
  const rows = SHOWABLE_PARAMETERS.map((name) => [
    stringConst(name),
    name === 'search_path'
      ? stringConst(session.defaultSchema ?? '')
      : ({
          FuncCall: {
            funcname: [stringNode('current_setting')],
            args: [stringConst(name)],
            funcformat: 'COERCE_EXPLICIT_CALL',
          },
        } as AstNode),
  ])
  return selectStmt({
    targets: [resTarget(columnRef('name')), resTarget(columnRef('setting'))],
    from: [valuesTable(rows, 'settings', ['name', 'setting'])],
  })
}
