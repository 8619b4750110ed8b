import { DS_TYPES, POOL_MODES } from '@palisade/store'
import * as v from 'valibot'
import { pageQuery } from '../pagination.js'
import { intRange, jsonObject, optionalBoolean, search, text } from './common.js'

const dsFields = {
  name: v.pipe(
    text(1, 64),
    v.regex(/^[A-Za-z][A-Za-z0-9_-]*$/, 'must match [A-Za-z][A-Za-z0-9_-]*'),
  ),
  ds_type: v.picklist(DS_TYPES, `expected ${DS_TYPES.join(' or ')}`),
  /** Keys per `ds_type` (docs/resources.md#datasources) are checked by the store, which knows the merge rules. */
  config: jsonObject,
  access_mode: v.nullish(
    v.picklist(['open', 'policy_required'], 'expected open or policy_required'),
  ),
  is_active: optionalBoolean,
  statement_timeout_ms: v.nullish(intRange(0, 86_400_000)),
  pool_size: v.nullish(intRange(1, 200)),
  /** null: the server's default pool mode (`--pool-mode`). */
  pool_mode: v.nullish(v.picklist(POOL_MODES, 'expected session or transaction')),
  classification_sampling: optionalBoolean,
}

/** Body of `POST /datasources`. */
export const createDatasourceBody = v.object(dsFields)

/** Body of `PUT`/`PATCH /datasources/{id}`. */
export const updateDatasourceBody = v.partial(v.object(dsFields))

/** Query of `GET /datasources`. */
export const listDatasourcesQuery = v.object({ ...pageQuery, search })
