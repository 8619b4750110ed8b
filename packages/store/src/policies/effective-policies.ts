import type { EffectivePolicy, PolicyTarget, PolicyType } from '@palisade/core'
import { eq } from 'drizzle-orm'
import { inWindow } from '../access/grant-window.js'
import type { Db } from '../kernel/db.js'
import type { ResolvedRole } from '../kernel/role-graph.js'
import { datasources, decisionFunctions, policies, policyAssignments } from '../tables.js'

/** One assignment that reaches a user on a datasource (docs/roles-and-access.md#checking-what-applies-to-a-user). */
export interface EffectivePolicyEntry {
  assignment_id: string
  policy_id: string
  policy_name: string
  policy_type: PolicyType
  version: number
  is_enabled: boolean
  /** `shadow` policies are evaluated and audited, never applied. */
  enforcement: 'enforce' | 'shadow'
  decision_function_id: string | null
  datasource_id: string
  datasource_name: string
  scope: 'user' | 'role' | 'all'
  priority: number
  source: string
  source_role_id: string | null
  applies: boolean
}

const scopeRank = { user: 0, role: 1, all: 2 } as const

/** Every assignment on a datasource with its policy and decision function rows. */
export async function loadDatasourceAssignments(db: Db, datasourceId: string) {
  return db
    .select({ a: policyAssignments, p: policies, f: decisionFunctions, dsName: datasources.name })
    .from(policyAssignments)
    .innerJoin(policies, eq(policies.id, policyAssignments.policyId))
    .innerJoin(datasources, eq(datasources.id, policyAssignments.datasourceId))
    .leftJoin(decisionFunctions, eq(decisionFunctions.id, policies.decisionFunctionId))
    .where(eq(policyAssignments.datasourceId, datasourceId))
}

/**
 * The assignments that reach one user at `at` (epoch ms): scope all, the user's own, and their
 * resolved roles', each only inside its validity window.
 */
export function reaching(
  rows: readonly Reaching[],
  userId: string,
  roles: readonly ResolvedRole[],
  at = Date.now(),
): Reaching[] {
  const roleIds = new Set(roles.map((r) => r.id))
  return rows.filter(
    ({ a }) =>
      inWindow(a, at) &&
      (a.scope === 'all' ||
        (a.scope === 'user' && a.userId === userId) ||
        (a.scope === 'role' && a.roleId !== null && roleIds.has(a.roleId))),
  )
}

/** One assignment row with its policy and decision function. */
export type Reaching = Awaited<ReturnType<typeof loadDatasourceAssignments>>[number]

/** Orders copies of one policy: lower priority, then user < role < all, then smaller id (10.1). */
function better(x: Reaching, y: Reaching): boolean {
  if (x.a.priority !== y.a.priority) return x.a.priority < y.a.priority
  const sx = scopeRank[x.a.scope as keyof typeof scopeRank]
  const sy = scopeRank[y.a.scope as keyof typeof scopeRank]
  if (sx !== sy) return sx < sy
  return x.a.id < y.a.id
}

/** The winning copy per enabled policy id (docs/rules.md rule 4). */
function winners(rows: readonly Reaching[]): Map<string, Reaching> {
  const best = new Map<string, Reaching>()
  for (const row of rows) {
    if (!row.p.isEnabled) continue
    const current = best.get(row.p.id)
    if (!current || better(row, current)) best.set(row.p.id, row)
  }
  return best
}

/** Deduplicated enabled policies in core's shape, with decision bindings. */
export function toEffectivePolicies(rows: readonly Reaching[]): EffectivePolicy[] {
  return [...winners(rows).values()]
    .sort((x, y) => x.a.priority - y.a.priority || (x.p.name < y.p.name ? -1 : 1))
    .map(({ a, p, f }) => ({
      id: p.id,
      name: p.name,
      version: p.version,
      type: p.policyType as PolicyType,
      targets: p.targets as PolicyTarget[],
      filterExpression: p.filterExpression,
      maskExpression: p.maskExpression,
      ...(p.policyType === 'aggregation'
        ? { minGroupSize: p.minGroupSize, allowedAggregates: p.allowedAggregates ?? [] }
        : {}),
      priority: a.priority,
      scope: a.scope as 'user' | 'role' | 'all',
      assignmentId: a.id,
      ...(p.enforcement === 'shadow' ? { enforcement: 'shadow' as const } : {}),
      decision: f
        ? {
            functionId: f.id,
            name: f.name,
            version: f.version,
            artifact: f.artifact,
            config: f.decisionConfig,
            evaluateContext: f.evaluateContext as 'session' | 'query',
            onError: f.onError as 'deny' | 'skip',
            logLevel: f.logLevel as 'off' | 'error' | 'info',
            isEnabled: f.isEnabled,
          }
        : null,
    }))
}

/** The admin view: every reaching assignment, disabled included, annotated (docs/roles-and-access.md#checking-what-applies-to-a-user). */
export function toEffectiveEntries(
  rows: readonly Reaching[],
  roles: readonly ResolvedRole[],
): EffectivePolicyEntry[] {
  const byId = new Map(roles.map((r) => [r.id, r]))
  const win = winners(rows)
  return rows
    .map(({ a, p, dsName }) => {
      const role = a.roleId ? byId.get(a.roleId) : undefined
      const source =
        a.scope === 'all'
          ? 'all users'
          : a.scope === 'user'
            ? 'direct'
            : role && role.depth === 0
              ? `role '${role.name}'`
              : `inherited from '${role?.name ?? ''}'`
      return {
        assignment_id: a.id,
        policy_id: p.id,
        policy_name: p.name,
        policy_type: p.policyType as PolicyType,
        version: p.version,
        is_enabled: p.isEnabled,
        enforcement: p.enforcement as 'enforce' | 'shadow',
        decision_function_id: p.decisionFunctionId,
        datasource_id: a.datasourceId,
        datasource_name: dsName,
        scope: a.scope as EffectivePolicyEntry['scope'],
        priority: a.priority,
        source,
        source_role_id: a.scope === 'role' ? a.roleId : null,
        applies: win.get(p.id)?.a.id === a.id,
      }
    })
    .sort((x, y) => x.priority - y.priority || x.policy_name.localeCompare(y.policy_name))
}
