import { lte, sql } from 'drizzle-orm'
import type { StoreContext } from '../kernel/context.js'
import { rowsOf } from '../kernel/db.js'
import type { Mutation } from '../kernel/mutation.js'
import { membersOf } from '../kernel/role-graph.js'
import { assignmentChanges, assignmentEvent } from '../policies/assignment-cascade.js'
import { auditExpiredMember } from '../roles/role-members.js'
import { datasourceAccess, policyAssignments, roleMembers } from '../tables.js'

/** The actor of changes Palisade makes by itself (expiry), as in the admin audit. */
export const SYSTEM_ACTOR_ID = '00000000-0000-0000-0000-000000000000'

/** Longest wait between looks for the next deadline (grants saved by other instances). */
const RECHECK_MS = 30_000

/**
 * Removes grants whose `valid_until` has passed, with one audit entry each (reason `expired`,
 * the system actor) and the usual change events. Open sessions do not wait for it: a session
 * rebuilds itself at its first statement after any window bound it was built under
 * (`SessionInput.validUntil`). The sweep makes the expiry visible in the admin audit and in
 * listings. Every instance sweeps; the delete makes a grant's expiry recorded exactly once.
 */
export class GrantExpiry {
  readonly #ctx: StoreContext
  #timer: ReturnType<typeof setTimeout> | undefined
  #queue: Promise<unknown> = Promise.resolve()
  #stopped = false
  #unsubscribe: (() => void) | undefined

  constructor(ctx: StoreContext) {
    this.#ctx = ctx
  }

  /** Sweeps now, then at every deadline; any committed change re-reads the next deadline. */
  start(): void {
    this.#unsubscribe = this.#ctx.feed.subscribe(() => this.#enqueue(() => this.#rearm()))
    this.#enqueue(() => this.#sweepAndRearm())
  }

  async stop(): Promise<void> {
    this.#stopped = true
    this.#unsubscribe?.()
    clearTimeout(this.#timer)
    await this.#queue
  }

  /** Removes every grant past its window now; returns how many. */
  async sweep(): Promise<number> {
    return this.#ctx.mutate(SYSTEM_ACTOR_ID, async (m) => {
      const now = sql`now()`
      const members = await m.tx
        .delete(roleMembers)
        .where(lte(roleMembers.validUntil, now))
        .returning()
      const access = await m.tx
        .delete(datasourceAccess)
        .where(lte(datasourceAccess.validUntil, now))
        .returning()
      const assignments = await m.tx
        .delete(policyAssignments)
        .where(lte(policyAssignments.validUntil, now))
        .returning()
      const total = members.length + access.length + assignments.length
      if (total === 0) {
        m.noop()
        return 0
      }
      for (const r of members) auditExpiredMember(m, r)
      if (members.length > 0) m.invalidate({ type: 'user', userIds: members.map((r) => r.userId) })
      for (const r of access) await expireAccess(m, r)
      for (const r of assignments) {
        m.audit('policy_assignment', r.id, 'unassign', assignmentChanges(r, 'expired'))
        m.invalidate(await assignmentEvent(m.tx, r))
      }
      return total
    })
  }

  #enqueue(step: () => Promise<void>): void {
    this.#queue = this.#queue
      .then(() => (this.#stopped ? undefined : step()))
      .catch(() => {
        // A sweep that failed (store briefly unreachable) is retried at the next recheck.
        this.#arm(RECHECK_MS)
      })
  }

  async #sweepAndRearm(): Promise<void> {
    await this.sweep()
    await this.#rearm()
  }

  async #rearm(): Promise<void> {
    const [row] = await rowsOf<{ next: number | null }>(
      this.#ctx.db.execute(sql`
        SELECT (extract(epoch FROM min(t)) * 1000)::float8 AS next FROM (
          SELECT min(valid_until) AS t FROM role_members WHERE valid_until IS NOT NULL
          UNION ALL SELECT min(valid_until) FROM datasource_access WHERE valid_until IS NOT NULL
          UNION ALL SELECT min(valid_until) FROM policy_assignments WHERE valid_until IS NOT NULL
        ) deadlines`),
    )
    const next = row?.next === null || row?.next === undefined ? null : Number(row.next)
    this.#arm(next === null ? RECHECK_MS : Math.min(Math.max(next - Date.now(), 0), RECHECK_MS))
  }

  #arm(delayMs: number): void {
    if (this.#stopped) return
    clearTimeout(this.#timer)
    this.#timer = setTimeout(() => this.#enqueue(() => this.#sweepAndRearm()), delayMs)
    this.#timer.unref?.()
  }
}

/** Audits and announces one expired access row. */
export async function expireAccess(
  m: Mutation,
  r: typeof datasourceAccess.$inferSelect,
): Promise<void> {
  m.audit('data_source_access', r.datasourceId, 'revoke_access', {
    datasource_id: r.datasourceId,
    scope: r.scope,
    ...(r.userId ? { user_id: r.userId } : {}),
    ...(r.roleId ? { role_id: r.roleId } : {}),
    valid_until: r.validUntil?.toISOString() ?? null,
    reason: 'expired',
  })
  if (r.scope === 'user' && r.userId) {
    m.invalidate({ type: 'ds_users', datasourceId: r.datasourceId, userIds: [r.userId] })
  } else if (r.scope === 'role' && r.roleId) {
    const userIds = await membersOf(m.tx, [r.roleId])
    m.invalidate({ type: 'ds_users', datasourceId: r.datasourceId, userIds })
  } else {
    m.invalidate({ type: 'ds', datasourceId: r.datasourceId })
  }
}
