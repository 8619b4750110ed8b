import type { ChangeFeed } from './change-feed.js'
import type { Db, StoreDriver } from './db.js'
import type { Mutation } from './mutation.js'
import type { SecretBox } from './secret-box.js'

/** What every service shares: the database, the driver, the feed and the audited-write helper. */
export interface StoreContext {
  readonly db: Db
  readonly driver: StoreDriver
  readonly feed: ChangeFeed
  readonly secrets: SecretBox
  /** Runs one audited mutation (see `runMutation`). */
  mutate<T>(actorId: string, fn: (m: Mutation) => Promise<T>): Promise<T>
}

/** ISO-8601 UTC with milliseconds, or null (docs/resources.md#values). */
export function iso(value: Date | null | undefined): string | null {
  return value ? value.toISOString() : null
}

/** ISO-8601 for a non-null timestamp. */
export function isoNow(value: Date): string {
  return value.toISOString()
}

/** The fields whose values differ between two snapshots, as `{before, after}` (docs/audit.md#admin-audit). */
export function diffFields(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
): { before: Record<string, unknown>; after: Record<string, unknown> } | null {
  const b: Record<string, unknown> = {}
  const a: Record<string, unknown> = {}
  for (const key of Object.keys(after)) {
    if (JSON.stringify(before[key]) !== JSON.stringify(after[key])) {
      b[key] = before[key] ?? null
      a[key] = after[key] ?? null
    }
  }
  return Object.keys(a).length === 0 ? null : { before: b, after: a }
}

/** Sorted unique strings. */
export function sortedUnique(values: Iterable<string>): string[] {
  return [...new Set(values)].sort()
}
