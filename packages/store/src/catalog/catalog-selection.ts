// A save_catalog selection checked and turned into rows, a slice of tables at a time.
import type { RelationName } from '@palisade/core'
import * as v from 'valibot'
import { type ErrorDetail, ValidationError } from '../kernel/errors.js'
import { turnTaker } from '../kernel/slices.js'
import { boundedString, detailsOf } from '../kernel/validation.js'
import { catalogIds, type SaveSchemaInput } from './catalog-view.js'

const name = boundedString(1, 63)
const relationNames = v.nullish(
  v.array(v.object({ schema: name, table: name }), 'expected an array'),
)
const schemaFields = v.object({
  schema_name: name,
  schema_alias: v.nullish(
    v.union([
      v.literal(''),
      v.pipe(boundedString(1, 63), v.regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'invalid alias')),
    ]),
  ),
  is_selected: v.boolean('expected a boolean'),
  tables: v.array(v.unknown()),
})
const tableFields = v.object({
  table_name: name,
  table_type: v.nullish(
    v.picklist(['TABLE', 'VIEW', 'MATERIALIZED VIEW', 'FOREIGN TABLE'], 'unknown table_type'),
  ),
  is_selected: v.boolean('expected a boolean'),
  view_definition: v.nullish(v.string('expected a string')),
  view_reads: relationNames,
  ancestors: relationNames,
  primary_key: v.nullish(v.array(name, 'expected an array')),
  columns: v.nullish(
    v.array(
      v.object({
        column_name: name,
        ordinal_position: v.pipe(v.number('expected an integer'), v.integer('expected an integer')),
        data_type: boundedString(1, 256),
        is_nullable: v.boolean('expected a boolean'),
        column_default: v.nullish(v.string('expected a string')),
        is_selected: v.nullish(v.boolean('expected a boolean')),
      }),
    ),
  ),
})

/**
 * Checks a selection as `parseBody` would (every problem reported together, 422), table by
 * table, with a turn for other work every few milliseconds; visible schema names are unique.
 */
export async function checkSelection(input: unknown): Promise<SaveSchemaInput[]> {
  if (!Array.isArray(input)) {
    throw new ValidationError([
      { field: 'body', code: 'invalid_type', message: 'expected an array' },
    ])
  }
  const details: ErrorDetail[] = []
  const out: SaveSchemaInput[] = []
  const visible = new Set<string>()
  const turn = turnTaker()
  for (const [i, raw] of input.entries()) {
    const schema = v.safeParse(schemaFields, raw, { abortEarly: false })
    if (!schema.success) {
      details.push(...detailsOf(schema.issues, `[${i}]`))
      continue
    }
    const s = schema.output
    const label = s.schema_alias || s.schema_name
    if (visible.has(label)) {
      details.push({
        field: `[${i}].schema_alias`,
        code: 'duplicate',
        message: `visible name ${label} is used twice`,
      })
    }
    visible.add(label)
    const tables: SaveSchemaInput['tables'] = []
    for (const [j, t] of s.tables.entries()) {
      const table = v.safeParse(tableFields, t, { abortEarly: false })
      if (table.success) tables.push(table.output)
      else details.push(...detailsOf(table.issues, `[${i}].tables[${j}]`))
      await turn()
    }
    out.push({ ...s, tables })
  }
  if (details.length > 0) throw new ValidationError(details)
  return out
}

/** One stored schema row of a selection. */
export interface SchemaRow {
  id: string
  schema_name: string
  schema_alias: string | null
  is_selected: boolean
}

/**
 * One stored table row. `set_definition`, `set_ancestors` and `set_key` say whether the save
 * carries that metadata: a save that did not read the upstream keeps what is stored.
 */
export interface TableRow {
  id: string
  schema_id: string
  table_name: string
  table_type: string
  is_selected: boolean
  set_definition: boolean
  view_definition: string | null
  view_reads: RelationName[] | null
  set_ancestors: boolean
  ancestors: RelationName[] | null
  set_key: boolean
  primary_key: string[] | null
}

/** One stored column row; `is_selected` null keeps the stored choice (new columns: selected). */
export interface ColumnRow {
  id: string
  table_id: string
  column_name: string
  ordinal_position: number
  data_type: string
  is_nullable: boolean
  column_default: string | null
  is_selected: boolean | null
}

/** A table with the columns a save replaces (null: keep the stored ones). */
export interface SelectionTable {
  row: TableRow
  columns: ColumnRow[] | null
}

/** A checked selection as rows with their deterministic ids. */
export interface SelectionRows {
  schemas: SchemaRow[]
  tables: SelectionTable[]
}

/**
 * The rows of a checked selection, ids derived as `catalogIds` says; a schema, table or column
 * listed twice keeps its last listing, as successive upserts did.
 */
export async function selectionRows(ds: string, input: SaveSchemaInput[]): Promise<SelectionRows> {
  const schemas = new Map<string, SchemaRow>()
  const tables = new Map<string, SelectionTable>()
  const turn = turnTaker()
  for (const s of input) {
    const schemaId = catalogIds.schema(ds, s.schema_name)
    schemas.set(schemaId, {
      id: schemaId,
      schema_name: s.schema_name,
      schema_alias: s.schema_alias ? s.schema_alias : null,
      is_selected: s.is_selected,
    })
    for (const t of s.tables) {
      const id = catalogIds.table(ds, s.schema_name, t.table_name)
      const columns = t.columns
        ? [
            ...new Map(
              t.columns.map((c) => [
                c.column_name,
                {
                  id: catalogIds.column(ds, s.schema_name, t.table_name, c.column_name),
                  table_id: id,
                  column_name: c.column_name,
                  ordinal_position: c.ordinal_position,
                  data_type: c.data_type,
                  is_nullable: c.is_nullable,
                  column_default: c.column_default ?? null,
                  is_selected: c.is_selected ?? true,
                },
              ]),
            ).values(),
          ]
        : null
      tables.delete(id)
      tables.set(id, {
        row: {
          id,
          schema_id: schemaId,
          table_name: t.table_name,
          table_type: t.table_type ?? 'TABLE',
          is_selected: t.is_selected,
          set_definition: t.view_definition !== undefined,
          view_definition: t.view_definition ?? null,
          view_reads: t.view_definition === undefined ? null : (t.view_reads ?? null),
          set_ancestors: t.ancestors !== undefined,
          ancestors: t.ancestors ?? null,
          set_key: t.primary_key !== undefined,
          primary_key: t.primary_key ?? null,
        },
        columns,
      })
      await turn()
    }
  }
  return { schemas: [...schemas.values()], tables: [...tables.values()] }
}
