import { gte, lte, type SQL } from 'drizzle-orm'
import type { PgColumn } from 'drizzle-orm/pg-core'
import { StoreError } from '../kernel/errors.js'
import { isUuid } from '../kernel/ids.js'

/** A time bound: a Date or any RFC 3339 date-time; a value without a zone is read as UTC. */
export type TimeInput = Date | string

/** Parses a time bound, or 400 invalid_parameter. */
export function parseTime(name: string, value: TimeInput | undefined): Date | undefined {
  if (value === undefined) return undefined
  if (value instanceof Date) return value
  const zoned = /[zZ]|[+-]\d{2}:?\d{2}$/.test(value) ? value : `${value}Z`
  const date = new Date(zoned)
  if (Number.isNaN(date.getTime())) throw invalidParameter(name, 'is not a valid date-time')
  return date
}

/** 400 invalid_parameter naming the parameter. */
export function invalidParameter(name: string, problem: string): StoreError {
  return new StoreError('invalid_parameter', `${name} ${problem}`, [
    { field: name, code: 'invalid_type', message: `${name} ${problem}` },
  ])
}

/** Picks one of two spellings of a parameter; different values are a 400 (docs/audit.md#reading-the-logs). */
export function oneOf<T>(a: [string, T | undefined], b: [string, T | undefined]): T | undefined {
  const [nameA, va] = a
  const [nameB, vb] = b
  if (va !== undefined && vb !== undefined && String(va) !== String(vb)) {
    throw invalidParameter(nameB, `differs from ${nameA}`)
  }
  return va ?? vb
}

/** Checks a uuid filter. */
export function uuidFilter(name: string, value: string | undefined): string | undefined {
  if (value !== undefined && !isUuid(value)) throw invalidParameter(name, 'is not a uuid')
  return value
}

/** Inclusive `created_at` bounds; `from` later than `to` is a 400. */
export function timeRange(
  column: PgColumn,
  input: { from?: TimeInput; to?: TimeInput; since?: TimeInput; until?: TimeInput },
): SQL[] {
  const from = parseTime('from', oneOf(['from', input.from], ['since', input.since]))
  const to = parseTime('to', oneOf(['to', input.to], ['until', input.until]))
  if (from && to && from > to) throw invalidParameter('from', 'is later than to')
  const out: SQL[] = []
  if (from) out.push(gte(column, from))
  if (to) out.push(lte(column, to))
  return out
}
