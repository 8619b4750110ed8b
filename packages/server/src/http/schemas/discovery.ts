import * as v from 'valibot'
import { text, uuid } from './common.js'

const name = text(1, 63)
const MAX_ITEMS = 10_000

const list = <S extends v.GenericSchema>(item: S, what: string) =>
  v.pipe(
    v.array(item, 'expected an array'),
    v.minLength(1, `needs at least one ${what}`),
    v.maxLength(MAX_ITEMS, `allows at most ${MAX_ITEMS} ${what}s`),
  )

/** SaveSchema of docs/admin-api.md#catalog-discovery: the selection to store; column metadata is read upstream. */
const saveSchema = v.object({
  schema_name: name,
  schema_alias: v.nullish(
    v.pipe(
      v.string('expected a string'),
      v.maxLength(63, 'must be at most 63 characters'),
      v.regex(/^([A-Za-z_][A-Za-z0-9_]*)?$/, 'must be empty or match [A-Za-z_][A-Za-z0-9_]*'),
    ),
  ),
  is_selected: v.boolean('expected a boolean'),
  tables: v.pipe(
    v.array(
      v.object({
        table_name: name,
        table_type: v.nullish(
          v.picklist(
            ['TABLE', 'VIEW', 'MATERIALIZED VIEW', 'FOREIGN TABLE'],
            'expected TABLE, VIEW, MATERIALIZED VIEW or FOREIGN TABLE',
          ),
        ),
        is_selected: v.boolean('expected a boolean'),
        columns: v.nullish(
          v.array(
            v.object({ column_name: name, is_selected: v.boolean('expected a boolean') }),
            'expected an array',
          ),
        ),
      }),
      'expected an array',
    ),
    v.maxLength(MAX_ITEMS, `allows at most ${MAX_ITEMS} tables`),
  ),
})

/** Body of `POST /datasources/{id}/discover`: a union on `action` (docs/admin-api.md#catalog-discovery). */
export const discoverBody = v.variant(
  'action',
  [
    v.object({ action: v.literal('discover_schemas') }),
    v.object({ action: v.literal('discover_tables'), schemas: list(name, 'schema') }),
    v.object({
      action: v.literal('discover_columns'),
      tables: list(v.object({ schema: name, table: name }), 'table'),
    }),
    v.object({
      action: v.literal('save_catalog'),
      schemas: v.pipe(
        v.array(saveSchema, 'expected an array'),
        v.maxLength(MAX_ITEMS, `allows at most ${MAX_ITEMS} schemas`),
      ),
    }),
    v.object({ action: v.literal('sync_catalog') }),
  ],
  'expected discover_schemas, discover_tables, discover_columns, save_catalog or sync_catalog',
)

/** A validated discovery request. */
export type DiscoverRequest = v.InferOutput<typeof discoverBody>

/** `{id}/discover/{job_id}` path. */
export const jobParams = v.object({ id: uuid, job_id: uuid })
