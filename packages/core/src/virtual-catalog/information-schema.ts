import {
  type AstNode,
  columnRef,
  nullConst,
  rangeVar,
  resTarget,
  selectStmt,
  stringConst,
  typeCast,
} from '../ast/node.js'
import type { CompiledSession } from '../session/compiled-session.js'

/**
 * Column lists of the virtualized `information_schema` views (identical in PostgreSQL 15-18).
 * Each view is replaced by a derived table over the real view that keeps only the session's
 * visible schemas, tables and columns, shows schema aliases and the datasource name as catalog.
 */
const VIEWS = {
  schemata: {
    columns: `catalog_name schema_name schema_owner default_character_set_catalog
      default_character_set_schema default_character_set_name sql_path`,
    keys: ['schema_name'],
  },
  tables: {
    columns: `table_catalog table_schema table_name table_type self_referencing_column_name
      reference_generation user_defined_type_catalog user_defined_type_schema user_defined_type_name
      is_insertable_into is_typed commit_action`,
    keys: ['table_schema', 'table_name'],
  },
  views: {
    columns: `table_catalog table_schema table_name view_definition check_option is_updatable
      is_insertable_into is_trigger_updatable is_trigger_deletable is_trigger_insertable_into`,
    keys: ['table_schema', 'table_name'],
  },
  columns: {
    columns: `table_catalog table_schema table_name column_name ordinal_position column_default
      is_nullable data_type character_maximum_length character_octet_length numeric_precision
      numeric_precision_radix numeric_scale datetime_precision interval_type interval_precision
      character_set_catalog character_set_schema character_set_name collation_catalog
      collation_schema collation_name domain_catalog domain_schema domain_name udt_catalog
      udt_schema udt_name scope_catalog scope_schema scope_name maximum_cardinality dtd_identifier
      is_self_referencing is_identity identity_generation identity_start identity_increment
      identity_maximum identity_minimum identity_cycle is_generated generation_expression
      is_updatable`,
    keys: ['table_schema', 'table_name', 'column_name'],
  },
} as const

export type VirtualInformationSchemaView = keyof typeof VIEWS

export function isVirtualInformationSchemaView(name: string): name is VirtualInformationSchemaView {
  return Object.hasOwn(VIEWS, name)
}

/** The statement-level visible list a view's filter reads (pg-catalog.ts `catalogListsWith`). */
export function informationSchemaList(view: VirtualInformationSchemaView): string {
  return view === 'columns' ? 'visible_columns' : 'visible_relations'
}

/** Columns that would reveal the upstream database or role, or another object's SQL text. */
const HIDDEN_COLUMNS = new Set(['schema_owner', 'view_definition'])

/**
 * The view's columns a statement's literal condition may be copied inside the fence on (as
 * `x.<column>`): the names it passes through unchanged. PostgreSQL then takes the condition
 * into the view itself, so `table_name = 't05000'` reads one table's rows.
 */
export function informationSchemaPushable(
  session: CompiledSession,
  view: VirtualInformationSchemaView,
): ReadonlySet<string> {
  const aliased = schemaAliases(session).size > 0
  return new Set(
    VIEWS[view].keys.filter((k) => !aliased || (k !== 'table_schema' && k !== 'schema_name')),
  )
}

function schemaAliases(session: CompiledSession): Map<string, string> {
  const aliases = new Map<string, string>()
  for (const schema of session.schemas.values()) {
    if (schema.visible !== schema.upstream) aliases.set(schema.upstream, schema.visible)
  }
  return aliases
}

/**
 * The derived-table body that replaces a scan of `information_schema.<view>` for this session,
 * with `pushed` (conditions on `x.<column>`, see informationSchemaPushable) inside its fence.
 */
export function informationSchemaSubquery(
  session: CompiledSession,
  view: VirtualInformationSchemaView,
  pushed: readonly AstNode[] = [],
): AstNode {
  const spec = VIEWS[view]
  const columns = spec.columns.split(/\s+/).filter((c) => c.length > 0)
  const aliases = schemaAliases(session)
  const targets = columns.map((column) => {
    // Typed as the real views type them (their domains), so clients see the same column types.
    if (HIDDEN_COLUMNS.has(column)) {
      const domain = column === 'view_definition' ? 'character_data' : 'sql_identifier'
      return resTarget(typeCast(nullConst(), ['information_schema', domain]), column)
    }
    if (column.endsWith('_catalog') || column === 'catalog_name') {
      // The catalog label is the datasource name (docs/rules.md rule 12), never the upstream database.
      const label: AstNode = {
        CaseExpr: {
          args: [
            caseWhen(
              { NullTest: { arg: columnRef(column), nulltesttype: 'IS_NOT_NULL' } },
              stringConst(session.datasource.name),
            ),
          ],
        },
      }
      return resTarget(typeCast(label, ['information_schema', 'sql_identifier']), column)
    }
    if ((column === 'table_schema' || column === 'schema_name') && aliases.size > 0) {
      return resTarget(
        {
          CaseExpr: {
            arg: columnRef(column),
            args: [...aliases].map(([upstream, visible]) =>
              caseWhen(stringConst(upstream), stringConst(visible)),
            ),
            defresult: columnRef(column),
          },
        },
        column,
      )
    }
    return resTarget(columnRef(column))
  })
  // Fenced like a filtered table scan: no user condition runs on a row this filter removes.
  const visible = visibleRowsPredicate(spec.keys)
  return selectStmt({
    targets,
    from: [rangeVar('information_schema', view, 'x')],
    where:
      pushed.length === 0
        ? visible
        : { BoolExpr: { boolop: 'AND_EXPR', args: [visible, ...pushed] } },
    fence: true,
  })
}

function caseWhen(expr: AstNode, result: AstNode): AstNode {
  return { CaseWhen: { expr, result } }
}

/**
 * `(keys) IN (SELECT …)` over the statement's visible lists (pg-catalog.ts `catalogListsWith`):
 * PostgreSQL hashes the visible objects once, where an IN list of 100,000 rows took it minutes.
 */
function visibleRowsPredicate(keys: readonly string[]): AstNode {
  const sql =
    keys.length === 1
      ? 'SELECT v.nspname FROM palisade_visible_relations v'
      : keys.length === 2
        ? 'SELECT v.nspname, v.relname FROM palisade_visible_relations v'
        : 'SELECT v.nspname, v.relname, a.attname FROM palisade_visible_columns v, pg_catalog.unnest(v.attnames) a(attname)'
  const lexpr: AstNode =
    keys.length === 1
      ? columnRef(keys[0] as string)
      : { RowExpr: { args: keys.map((k) => columnRef(k)), row_format: 'COERCE_IMPLICIT_CAST' } }
  return {
    SubLink: {
      subLinkType: 'ANY_SUBLINK',
      testexpr: lexpr,
      subselect: { PalisadeFragment: { sql } },
    },
  } as unknown as AstNode
}
