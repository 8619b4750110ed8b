/** One step of a plan. */
export interface PlanStep {
  /** `conflict`: the bundle was made from an older version of the object (dry run only). */
  action: 'create' | 'update' | 'delete' | 'conflict'
  kind:
    | 'attribute_definition'
    | 'user'
    | 'role'
    | 'decision_function'
    | 'policy'
    | 'datasource'
    | 'datasource_access'
    | 'role_member'
    | 'role_parent'
    | 'assignment'
    | 'catalog_tag'
    | 'identity_provider'
  name: string
  /** For updates: the fields that change. */
  fields?: string[]
}

export interface BundlePlan {
  dry_run: boolean
  steps: PlanStep[]
  summary: { create: number; update: number; delete: number; conflict: number }
}

/** JSON with object keys sorted, so two equal objects always print the same. */
export function stable(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)),
        )
      : v,
  )
}

/** The fields of `want` whose values differ from `have` (compared as stable JSON). */
export function changedFields(have: object, want: object, skip: readonly string[] = []): string[] {
  const h = have as Record<string, unknown>
  const w = want as Record<string, unknown>
  return Object.keys(w).filter((k) => !skip.includes(k) && stable(h[k]) !== stable(w[k]))
}

export const pick = (value: object, fields: readonly string[]) =>
  Object.fromEntries(fields.map((f) => [f, (value as Record<string, unknown>)[f]]))
