/**
 * An empty search path pins functions, operators and types to pg_catalog, but casts are looked
 * up by type alone: a cast between built-in types implemented by a function outside pg_catalog
 * (only a superuser can create one) would run that function for `42::text`. Palisade refuses to
 * use an upstream session while such a cast exists.
 */
const UNSAFE = `SELECT 1 FROM pg_catalog.pg_cast c
  JOIN pg_catalog.pg_proc p ON p.oid = c.castfunc
  WHERE p.pronamespace <> 'pg_catalog'::pg_catalog.regnamespace
    AND c.castsource < 16384 AND c.casttarget < 16384`

/** One row, `unsafe`: the offending casts as text, or NULL when there is none. */
export const UNSAFE_CASTS_QUERY = `SELECT pg_catalog.string_agg(
    pg_catalog.format_type(c.castsource, NULL) || ' AS ' || pg_catalog.format_type(c.casttarget, NULL),
    ', ') AS unsafe
  FROM pg_catalog.pg_cast c JOIN pg_catalog.pg_proc p ON p.oid = c.castfunc
  WHERE p.pronamespace <> 'pg_catalog'::pg_catalog.regnamespace
    AND c.castsource < 16384 AND c.casttarget < 16384`

/** A statement that fails (division by zero) when an unsafe cast exists: for session resets. */
export const UNSAFE_CASTS_ASSERTION = `SELECT 1 / (NOT EXISTS (${UNSAFE}))::pg_catalog.int4`

/** What a client hears when the upstream defines unsafe casts; it names no object. */
export const UNSAFE_UPSTREAM_MESSAGE =
  'upstream refused: it defines casts between built-in types through non-system functions'

/** Raised when the upstream defines unsafe casts. */
export class UnsafeUpstreamError extends Error {
  readonly casts: string

  constructor(casts: string) {
    super(UNSAFE_UPSTREAM_MESSAGE)
    this.casts = casts
  }
}
