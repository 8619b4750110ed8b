import { and, asc, eq, gt, isNull, or, type SQL, sql } from 'drizzle-orm'
import * as v from 'valibot'
import { toWindow, windowFields, windowIfSet } from '../access/grant-window.js'
import { requireDatasource } from '../datasources/datasources-service.js'
import { isoNow, type StoreContext } from '../kernel/context.js'
import { type Db, onUniqueViolation } from '../kernel/db.js'
import { ResourceConflictError, ResourceNotFoundError, StoreError } from '../kernel/errors.js'
import { uuidv7 } from '../kernel/ids.js'
import { isPlainObject, parseBody, uuidString } from '../kernel/validation.js'
import { datasources, policies, policyAssignments, roles, users } from '../tables.js'
import { assignmentChanges, assignmentEvent, removeAssignments } from './assignment-cascade.js'

/** An assignment as the admin API returns it (docs/roles-and-access.md#policy-assignments). */
export interface Assignment {
  id: string
  assignment_id: string
  policy_id: string
  policy_name: string
  policy_type: string
  datasource_id: string
  datasource_name: string
  scope: 'user' | 'role' | 'all'
  user_id: string | null
  username: string | null
  role_id: string | null
  role_name: string | null
  priority: number
  /** The validity window of a time-bound assignment (absent for a lasting one). */
  valid_from?: string | null
  valid_until?: string | null
  created_by: string | null
  created_at: string
}

/** Body of `POST /datasources/{id}/policies`. */
export interface AssignPolicyInput {
  policy_id: string
  scope?: string | null
  user_id?: string | null
  role_id?: string | null
  priority?: number | null
  valid_from?: string | null
  valid_until?: string | null
}

export const assignmentSchema = v.object({
  policy_id: uuidString,
  scope: v.nullish(v.string('expected a string')),
  user_id: v.nullish(uuidString),
  role_id: v.nullish(uuidString),
  priority: v.nullish(
    v.pipe(
      v.number('expected an integer'),
      v.integer('expected an integer'),
      v.minValue(0, 'must be 0-1000000'),
      v.maxValue(1_000_000, 'must be 0-1000000'),
    ),
  ),
  ...windowFields,
})

/** Assignments joined with policy, datasource, user and role names; sorted by priority. */
export async function listAssignments(
  db: Db,
  filter: { policyId?: string; datasourceId?: string; id?: string },
): Promise<Assignment[]> {
  // An assignment past its window no longer exists, even before the expiry sweep removes it.
  const conditions: (SQL | undefined)[] = [
    or(isNull(policyAssignments.validUntil), gt(policyAssignments.validUntil, sql`now()`)),
  ]
  if (filter.policyId) conditions.push(eq(policyAssignments.policyId, filter.policyId))
  if (filter.datasourceId) conditions.push(eq(policyAssignments.datasourceId, filter.datasourceId))
  if (filter.id) conditions.push(eq(policyAssignments.id, filter.id))
  const rows = await db
    .select({
      a: policyAssignments,
      policyName: policies.name,
      policyType: policies.policyType,
      datasourceName: datasources.name,
      username: users.username,
      roleName: roles.name,
    })
    .from(policyAssignments)
    .innerJoin(policies, eq(policies.id, policyAssignments.policyId))
    .innerJoin(datasources, eq(datasources.id, policyAssignments.datasourceId))
    .leftJoin(users, eq(users.id, policyAssignments.userId))
    .leftJoin(roles, eq(roles.id, policyAssignments.roleId))
    .where(and(...conditions))
    .orderBy(
      asc(policyAssignments.priority),
      asc(policyAssignments.createdAt),
      asc(policyAssignments.id),
    )
  return rows.map((r) => ({
    id: r.a.id,
    assignment_id: r.a.id,
    policy_id: r.a.policyId,
    policy_name: r.policyName,
    policy_type: r.policyType,
    datasource_id: r.a.datasourceId,
    datasource_name: r.datasourceName,
    scope: r.a.scope as Assignment['scope'],
    user_id: r.a.userId,
    username: r.username,
    role_id: r.a.roleId,
    role_name: r.roleName,
    priority: r.a.priority,
    ...windowIfSet(r.a),
    created_by: r.a.createdBy,
    created_at: isoNow(r.a.createdAt),
  }))
}

/** Spec 2.6: user needs user_id only, role needs role_id only, all needs neither; else 400. */
function resolveScope(input: unknown): 'user' | 'role' | 'all' {
  const body = isPlainObject(input) ? input : {}
  const has = (k: string) => body[k] !== undefined && body[k] !== null
  const scope = has('scope')
    ? body['scope']
    : has('role_id')
      ? 'role'
      : has('user_id')
        ? 'user'
        : 'all'
  const ok =
    (scope === 'user' && has('user_id') && !has('role_id')) ||
    (scope === 'role' && has('role_id') && !has('user_id')) ||
    (scope === 'all' && !has('user_id') && !has('role_id'))
  if (!ok) {
    throw new StoreError('scope_mismatch', 'scope does not match the ids given', [
      {
        field: 'scope',
        code: 'not_allowed',
        message: 'user needs user_id, role needs role_id, all needs neither',
      },
    ])
  }
  return scope as 'user' | 'role' | 'all'
}

/** Policy assignments on datasources (docs/roles-and-access.md#policy-assignments). */
export class AssignmentsService {
  readonly #ctx: StoreContext

  constructor(ctx: StoreContext) {
    this.#ctx = ctx
  }

  /** A datasource's assignments, by priority then creation. */
  async list(datasourceId: string): Promise<Assignment[]> {
    await requireDatasource(this.#ctx.db, datasourceId)
    return listAssignments(this.#ctx.db, { datasourceId })
  }

  /**
   * Assigns a policy (docs/roles-and-access.md#policy-assignments): 404 datasource; 400 scope_mismatch; 422; 404 policy, user
   * or role; 409 already_exists. The policy version does not change.
   */
  async assign(
    datasourceId: string,
    input: AssignPolicyInput,
    actorId: string,
  ): Promise<Assignment> {
    return this.#ctx.mutate(actorId, async (m) => {
      await requireDatasource(m.tx, datasourceId)
      const scope = resolveScope(input)
      const body = parseBody(assignmentSchema, input)
      const exists = async (
        table: typeof policies | typeof users | typeof roles,
        id: string,
        what: string,
        field: string,
      ) => {
        const [row] = await m.tx.select({ id: table.id }).from(table).where(eq(table.id, id))
        if (!row) throw new ResourceNotFoundError(what, field)
      }
      await exists(policies, body.policy_id, 'policy', 'policy_id')
      if (scope === 'user') await exists(users, body.user_id as string, 'user', 'user_id')
      if (scope === 'role') await exists(roles, body.role_id as string, 'role', 'role_id')
      const window = toWindow(body, m.now)
      // An ended copy the expiry sweep has not reached yet is expired here, audited as such.
      const ended = await m.tx
        .select()
        .from(policyAssignments)
        .where(
          and(
            eq(policyAssignments.policyId, body.policy_id),
            eq(policyAssignments.datasourceId, datasourceId),
            eq(policyAssignments.scope, scope),
            sql`${policyAssignments.validUntil} <= now()`,
          ),
        )
      await removeAssignments(m, ended, 'expired')
      const [row] = await onUniqueViolation(
        () =>
          m.tx
            .insert(policyAssignments)
            .values({
              id: uuidv7(),
              policyId: body.policy_id,
              datasourceId,
              scope,
              userId: scope === 'user' ? (body.user_id ?? null) : null,
              roleId: scope === 'role' ? (body.role_id ?? null) : null,
              priority: body.priority ?? 100,
              ...window,
              createdBy: actorId,
              createdAt: m.now,
            })
            .returning(),
        () =>
          new ResourceConflictError('the policy is already assigned to this subject', 'policy_id'),
      )
      if (!row) throw new Error('insert returned no row')
      m.audit('policy_assignment', row.id, 'assign', assignmentChanges(row))
      m.invalidate(await assignmentEvent(m.tx, row))
      const [out] = await listAssignments(m.tx, { id: row.id })
      return out as Assignment
    })
  }

  /** Removes an assignment; 404 unless it exists on this datasource. */
  async unassign(datasourceId: string, assignmentId: string, actorId: string): Promise<void> {
    await this.#ctx.mutate(actorId, async (m) => {
      await requireDatasource(m.tx, datasourceId)
      const rows = await m.tx
        .select()
        .from(policyAssignments)
        .where(
          and(
            eq(policyAssignments.id, assignmentId),
            eq(policyAssignments.datasourceId, datasourceId),
          ),
        )
      if (rows.length === 0) throw new ResourceNotFoundError('assignment')
      await removeAssignments(m, rows)
    })
  }
}
