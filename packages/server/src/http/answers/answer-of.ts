import * as v from 'valibot'

/** `T` as JSON carries it: arrays and fields writable (JSON knows nothing of `readonly`). */
type Plain<T> = T extends readonly (infer E)[]
  ? Plain<E>[]
  : T extends object
    ? { -readonly [K in keyof T]: Plain<T[K]> }
    : T

/** Whether two types accept the same values, as far as TypeScript can tell. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false

/**
 * Returns an answer schema unchanged, and compiles only when the values it describes are exactly
 * those of `T`, the type the handler answers with (usually the store's): the OpenAPI document
 * cannot part ways with the code, and a field added to the store type fails the build here.
 *
 * ```ts
 * export const userAnswer = answerOf<User>()(v.strictObject({ id: v.string(), … }))
 * ```
 */
export function answerOf<T>() {
  return <S extends v.GenericSchema>(
    schema: S,
    ..._mismatch: Same<v.InferOutput<S>, Plain<T>> extends true ? [] : [differs: never]
  ): S => schema
}

/** A page of a top-level collection (docs/admin-api.md#pagination). */
export function pageOf<S extends v.GenericSchema>(item: S) {
  return v.strictObject({
    data: v.array(item),
    total: v.number(),
    page: v.number(),
    page_size: v.number(),
  })
}

/** Shorthands for the answer schemas' recurring fields. */
export const id = v.pipe(v.string(), v.uuid())
export const instant = v.pipe(v.string(), v.isoTimestamp())
export const nullableString = v.nullable(v.string())
export const nullableId = v.nullable(id)
export const nullableInstant = v.nullable(instant)
export const anyObject = v.record(v.string(), v.unknown())
