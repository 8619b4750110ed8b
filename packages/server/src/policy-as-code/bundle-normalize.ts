import { ApiError } from '../http/api-error.js'
import { BUNDLE_VERSION, type PolicyBundle } from './bundle-export.js'
import { normalizeIdentityProvider } from './bundle-identity-providers.js'
import { normalizeObjectTags } from './bundle-tags.js'
import {
  canonicalWindow,
  normalizeAccessWindows,
  normalizeWindows,
  optional,
} from './bundle-windows.js'

/** Fills what a hand-written bundle may leave out, so it compares with an export. */
export function normalizeBundle(input: unknown): PolicyBundle {
  const b = (input ?? {}) as Partial<PolicyBundle>
  if (b.version !== BUNDLE_VERSION) {
    throw new ApiError(422, 'validation_failed', 'request body is invalid', [
      { field: 'version', code: 'invalid', message: `must be ${BUNDLE_VERSION}` },
    ])
  }
  const list = <T>(v: T[] | undefined) => (Array.isArray(v) ? v : [])
  return {
    version: BUNDLE_VERSION,
    attribute_definitions: list(b.attribute_definitions).map((a) => ({
      key: a.key,
      entity_type: a.entity_type ?? 'user',
      value_type: a.value_type,
      display_name: a.display_name ?? a.key,
      default_value: a.default_value ?? null,
      allowed_values: a.allowed_values ?? null,
      description: a.description ?? null,
    })),
    users: list(b.users).map((u) => ({
      username: u.username,
      is_active: u.is_active ?? true,
      email: u.email ?? null,
      display_name: u.display_name ?? null,
      attributes: u.attributes ?? {},
      ...optional('limits', u.limits),
    })),
    roles: list(b.roles).map((r) => ({
      name: r.name,
      description: r.description ?? null,
      is_active: r.is_active ?? true,
      members: [...(r.members ?? [])].sort(),
      ...optional('member_windows', normalizeWindows(r.member_windows)),
      parents: [...(r.parents ?? [])].sort(),
      ...optional('limits', r.limits),
    })),
    decision_functions: list(b.decision_functions).map((f) => ({
      name: f.name,
      description: f.description ?? null,
      language: f.language ?? 'javascript',
      evaluate_context: f.evaluate_context,
      on_error: f.on_error ?? 'deny',
      log_level: f.log_level ?? 'off',
      is_enabled: f.is_enabled ?? true,
      decision_config: f.decision_config ?? {},
      source: f.source,
      ...(typeof f.version === 'number' ? { version: f.version } : {}),
    })),
    policies: list(b.policies).map((p) => ({
      name: p.name,
      description: p.description ?? null,
      policy_type: p.policy_type,
      targets: p.targets,
      filter_expression: p.filter_expression ?? null,
      mask_expression: p.mask_expression ?? null,
      // Only where given (an export writes them on aggregation policies alone), so others compare.
      ...optional('min_group_size', p.min_group_size ?? undefined),
      ...optional(
        'allowed_aggregates',
        p.policy_type === 'aggregation'
          ? [...(p.allowed_aggregates ?? [])].sort()
          : (p.allowed_aggregates ?? undefined),
      ),
      decision_function: p.decision_function ?? null,
      is_enabled: p.is_enabled ?? true,
      enforcement: p.enforcement ?? 'enforce',
      ...(typeof p.version === 'number' ? { version: p.version } : {}),
    })),
    datasources: list(b.datasources).map((d) => ({
      name: d.name,
      ds_type: d.ds_type,
      access_mode: d.access_mode ?? 'policy_required',
      is_active: d.is_active ?? true,
      statement_timeout_ms: d.statement_timeout_ms ?? 30_000,
      pool_size: d.pool_size ?? 10,
      pool_mode: d.pool_mode ?? null,
      config: d.config ?? {},
      access: {
        all: d.access?.all ?? false,
        users: [...(d.access?.users ?? [])].sort(),
        roles: [...(d.access?.roles ?? [])].sort(),
        ...normalizeAccessWindows(d.access?.windows),
      },
      assignments: list(d.assignments).map((a) => ({
        policy: a.policy,
        scope: a.scope ?? 'all',
        user: a.user ?? null,
        role: a.role ?? null,
        priority: a.priority ?? 100,
        ...(canonicalWindow(a) ?? {}),
      })),
      ...optional('tags', normalizeObjectTags(d.tags)),
    })),
    identity_providers: list(b.identity_providers).map(normalizeIdentityProvider),
  }
}
