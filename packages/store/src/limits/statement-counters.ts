import { and, eq, inArray, lt, sql } from 'drizzle-orm'
import type { Db } from '../kernel/db.js'
import { rowsOf } from '../kernel/db.js'
import { uuidv7 } from '../kernel/ids.js'
import { statementRateCounts, statementSlots } from './limit-counters-tables.js'

/** How long a statement's slot lives unless its instance extends it (it does while it runs). */
export const SLOT_TTL_MS = 30_000

/** What a user's statement is checked against; absent: not limited. */
export interface CounterLimits {
  perMinute?: number | undefined
  concurrent?: number | undefined
}

/** The store's answer: admitted (with the slot to give back), or refused and by what. */
export type CounterAdmission =
  | { admitted: true; slotId: string | null }
  | { admitted: false; limit: 'rate'; retryMs: number }
  | { admitted: false; limit: 'concurrency' }

/** Advisory lock class of the per-user slot count (docs/roles-and-access.md#limits). */
const SLOT_LOCK = 0x5a11_0002

/**
 * Statement counts shared by every instance on one store (docs/roles-and-access.md#limits):
 * one-minute windows of the PostgreSQL clock for `max_statements_per_minute`, and one slot per
 * running statement for `max_concurrent_statements`, each with an expiry its instance extends.
 * Only users with such limits are counted, one transaction per statement.
 */
export class StatementCounters {
  readonly #db: Db

  constructor(db: Db) {
    this.#db = db
  }

  /** Counts one statement in, or says which limit refuses it (then nothing is counted). */
  async enter(userId: string, limits: CounterLimits): Promise<CounterAdmission> {
    return this.#db.transaction(async (tx) => {
      if (limits.concurrent !== undefined) {
        await tx.execute(sql`SELECT pg_advisory_xact_lock(${SLOT_LOCK}, hashtext(${userId}))`)
        const [running] = await rowsOf<{ n: number }>(
          tx.execute(sql`SELECT count(*)::int AS n FROM statement_slots
            WHERE user_id = ${userId} AND expires_at > now()`),
        )
        if ((running?.n ?? 0) >= limits.concurrent) return { admitted: false, limit: 'concurrency' }
      }
      if (limits.perMinute !== undefined) {
        const [counted] = await rowsOf<{ count: number; retry_ms: number }>(
          tx.execute(sql`
            INSERT INTO statement_rate_counts AS c (user_id, "window", count)
            VALUES (${userId}, floor(extract(epoch FROM now()) / 60)::int, 1)
            ON CONFLICT (user_id, "window") DO UPDATE SET count = c.count + 1
              WHERE c.count < ${limits.perMinute}
            RETURNING c.count`),
        )
        if (!counted) {
          const [left] = await rowsOf<{ retry_ms: number }>(
            tx.execute(sql`SELECT ((floor(extract(epoch FROM now()) / 60) + 1) * 60000
              - extract(epoch FROM now()) * 1000)::float8 AS retry_ms`),
          )
          return { admitted: false, limit: 'rate', retryMs: Number(left?.retry_ms ?? 60_000) }
        }
      }
      if (limits.concurrent === undefined) return { admitted: true, slotId: null }
      const slotId = uuidv7()
      await tx.insert(statementSlots).values({
        id: slotId,
        userId,
        expiresAt: sql`now() + ${`${SLOT_TTL_MS} milliseconds`}::interval` as unknown as Date,
      })
      return { admitted: true, slotId }
    })
  }

  /** Gives a slot back once its statement ended. */
  async leave(slotId: string): Promise<void> {
    await this.#db.delete(statementSlots).where(eq(statementSlots.id, slotId))
  }

  /**
   * Extends the slots of statements still running here; also removes lapsed slots and the counts
   * of past windows, so the tables stay small.
   */
  async extend(slotIds: readonly string[]): Promise<void> {
    if (slotIds.length > 0) {
      await this.#db
        .update(statementSlots)
        .set({
          expiresAt: sql`now() + ${`${SLOT_TTL_MS} milliseconds`}::interval` as unknown as Date,
        })
        .where(inArray(statementSlots.id, [...slotIds]))
    }
    await this.#db.delete(statementSlots).where(lt(statementSlots.expiresAt, sql`now()`))
    await this.#db
      .delete(statementRateCounts)
      .where(
        and(lt(statementRateCounts.window, sql`floor(extract(epoch FROM now()) / 60)::int - 1`)),
      )
  }
}
