import {
  boundedString,
  identName,
  intRange,
  jsonObject,
  policyName,
  uuidString,
} from '@palisade/store'
import * as v from 'valibot'

// Field rules shared with the store, which validates the same bodies (docs/resources.md).
export { identName, intRange, jsonObject, policyName }

/** Lowercase hyphenated UUID, as every id in the admin API (docs/resources.md#values). */
export const uuid = uuidString

/** A string of `min` to `max` characters. */
export const text = boundedString

/** A boolean field that may be omitted or null. */
export const optionalBoolean = v.nullish(v.boolean('expected a boolean'))

/** `{id}` path parameter. */
export const idParams = v.object({ id: uuid })

/** A search filter of top-level lists. */
export const search = v.optional(v.string())

/** `{"user_ids": [...]}`-style id lists of the access and member routes. */
export const idList = (max: number, min = 0) =>
  v.pipe(
    v.array(uuid, 'expected an array of uuids'),
    v.minLength(min, `must hold at least ${min} ids`),
    v.maxLength(max, `must hold at most ${max} ids`),
  )
