import * as v from 'valibot'

/** Lowercase hyphenated UUID, as every id in the admin API (docs/resources.md#values). */
export const uuid = v.pipe(
  v.string('expected a uuid'),
  v.regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, 'must be a uuid'),
)

/** A string of `min` to `max` characters. */
export const text = (min: number, max: number) =>
  v.pipe(
    v.string('expected a string'),
    v.minLength(min, `must be at least ${min} characters`),
    v.maxLength(max, `must be at most ${max} characters`),
  )

/** An integer between `min` and `max`. */
export const intRange = (min: number, max: number) =>
  v.pipe(
    v.number('expected an integer'),
    v.integer('expected an integer'),
    v.minValue(min, `must be between ${min} and ${max}`),
    v.maxValue(max, `must be between ${min} and ${max}`),
  )

/** Optional field where null means "use the default" or "clear" (docs/resources.md#values, 1.3). */
export const nullable = <S extends v.GenericSchema>(schema: S) => v.nullish(schema)

/** A boolean field that may be omitted or null. */
export const optionalBoolean = v.nullish(v.boolean('expected a boolean'))

/** Usernames and role names share one rule (docs/resources.md#users, 14.2). */
export const identName = v.pipe(
  text(3, 50),
  v.regex(/^[A-Za-z][A-Za-z0-9_.-]*$/, 'must start with a letter and use A-Z a-z 0-9 _ . -'),
)

/** Names of policies and decision functions (docs/resources.md#policies). */
export const policyName = v.pipe(
  text(1, 100),
  v.regex(/^[A-Za-z0-9 _\-.:()'"]+$/, 'may contain letters, digits, space and _ - . : ( ) \' "'),
  v.check((s) => s.trim() === s, 'must not start or end with whitespace'),
)

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

/** A JSON object (valibot's `record` alone also accepts arrays). */
export const jsonObject = v.pipe(
  v.record(v.string(), v.unknown(), 'expected an object'),
  v.check((value) => !Array.isArray(value), 'expected an object'),
)
