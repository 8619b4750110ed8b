import { type SQL, sql } from 'drizzle-orm'
import * as v from 'valibot'
import { ValidationError } from '../kernel/errors.js'

/**
 * Validity windows of grants (role memberships, datasource access rows, policy assignments):
 * outside its window a grant does not exist (docs/policies.md "Time-bound access").
 */

/** A window bound in a request body: an RFC 3339 date-time (read as UTC without a zone) or null. */
const bound = v.optional(
  v.nullable(
    v.pipe(
      v.string('expected a date-time'),
      v.check((s) => !Number.isNaN(toDate(s).getTime()), 'expected an RFC 3339 date-time'),
    ),
  ),
)

/** The window fields every grant body accepts. */
export const windowFields = { valid_from: bound, valid_until: bound }

export interface WindowInput {
  valid_from?: string | null | undefined
  valid_until?: string | null | undefined
}

/** A parsed window; null bounds are open. */
export interface GrantWindow {
  validFrom: Date | null
  validUntil: Date | null
}

export const OPEN_WINDOW: GrantWindow = { validFrom: null, validUntil: null }

function toDate(s: string): Date {
  return new Date(/[zZ]|[+-]\d{2}:?\d{2}$/.test(s) ? s : `${s}Z`)
}

/**
 * The window of a checked body: 422 when it ends before it starts or has already ended (a grant
 * that could never exist is a mistake, not a no-op).
 */
export function toWindow(input: WindowInput, now: Date): GrantWindow {
  const validFrom = input.valid_from ? toDate(input.valid_from) : null
  const validUntil = input.valid_until ? toDate(input.valid_until) : null
  if (validFrom && validUntil && validUntil <= validFrom) {
    throw new ValidationError([
      {
        field: 'valid_until',
        code: 'out_of_range',
        message: 'valid_until must be after valid_from',
      },
    ])
  }
  if (validUntil && validUntil <= now) {
    throw new ValidationError([
      { field: 'valid_until', code: 'out_of_range', message: 'valid_until is already past' },
    ])
  }
  return { validFrom, validUntil }
}

/** The window as the API shows it. */
export function windowJson(w: GrantWindow): {
  valid_from: string | null
  valid_until: string | null
} {
  return {
    valid_from: w.validFrom?.toISOString() ?? null,
    valid_until: w.validUntil?.toISOString() ?? null,
  }
}

/**
 * The window fields of a time-bound grant for listings; nothing for a lasting one, so the
 * objects of grants without a window keep their documented shape.
 */
export function windowIfSet(w: GrantWindow): Partial<ReturnType<typeof windowJson>> {
  return w.validFrom || w.validUntil ? windowJson(w) : {}
}

/** Whether two windows have the same bounds. */
export function sameWindow(a: GrantWindow, b: GrantWindow): boolean {
  return (
    a.validFrom?.getTime() === b.validFrom?.getTime() &&
    a.validUntil?.getTime() === b.validUntil?.getTime()
  )
}

/** Whether a window holds at `at` (epoch milliseconds). */
export function inWindow(w: GrantWindow, at: number): boolean {
  return (
    (w.validFrom === null || w.validFrom.getTime() <= at) &&
    (w.validUntil === null || w.validUntil.getTime() > at)
  )
}

/** The earliest window bound after `at` among `windows`, or null when none is ahead. */
export function nextBound(windows: Iterable<GrantWindow>, at: number): number | null {
  let next: number | null = null
  for (const w of windows) {
    for (const d of [w.validFrom, w.validUntil]) {
      const t = d?.getTime()
      if (t !== undefined && t > at && (next === null || t < next)) next = t
    }
  }
  return next
}

/** SQL: the grant row `alias` holds now (the store's clock, as the sweeper uses). */
export function activeNow(alias: string): SQL {
  return sql.raw(
    `((${alias}.valid_from IS NULL OR ${alias}.valid_from <= now()) AND ` +
      `(${alias}.valid_until IS NULL OR ${alias}.valid_until > now()))`,
  )
}
