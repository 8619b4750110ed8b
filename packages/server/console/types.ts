/** The shapes of the admin API objects the console reads (docs/admin-api.md). */

export interface User {
  id: string
  username: string
  is_admin: boolean
  is_active: boolean
  email: string | null
  display_name: string | null
  attributes: Record<string, unknown>
  last_login_at: string | null
  created_at: string
}

export interface RoleRef {
  id: string
  name: string
  is_active: boolean
}

export interface Role extends RoleRef {
  description: string | null
  direct_member_count: number
}

export interface RoleDetail extends Role {
  effective_member_count: number
  /** `valid_from`/`valid_until` only on time-bound memberships. */
  members: {
    id: string
    username: string
    valid_from?: string | null
    valid_until?: string | null
  }[]
  parent_roles: RoleRef[]
  child_roles: RoleRef[]
  policy_assignments: {
    assignment_id: string
    policy_name: string
    datasource_name: string
    priority: number
    source: string
  }[]
  datasource_access: { datasource_id: string; datasource_name: string; source: string }[]
}

export interface EffectiveMember {
  user_id: string
  username: string
  direct_role_name: string
  source: string
}

export interface Datasource {
  id: string
  name: string
  ds_type: string
  config: Record<string, unknown>
  /** Whether classification may sample values. */
  classification_sampling?: boolean
  access_mode: string
  is_active: boolean
  statement_timeout_ms: number
  pool_size: number
  pool_mode?: string
  last_sync_at: string | null
  last_sync_result: Record<string, unknown> | null
}

export interface DatasourceType {
  ds_type: string
  label: string
  fields: {
    key: string
    label: string
    field_type: string
    required: boolean
    is_secret: boolean
    default_value: unknown
    options?: string[]
  }[]
}

export interface Target {
  schemas: string[]
  tables: string[]
  columns: string[] | null
  /** Catalog tags the target covers (docs/policies.md, "Tags"). */
  tags?: string[]
}

export interface Assignment {
  id: string
  policy_id: string
  policy_name: string
  policy_type: string
  datasource_id: string
  datasource_name: string
  scope: 'user' | 'role' | 'all'
  username: string | null
  role_name: string | null
  priority: number
}

export interface Policy {
  id: string
  name: string
  description: string | null
  policy_type: string
  targets: Target[]
  filter_expression: string | null
  mask_expression: string | null
  decision_function_id: string | null
  is_enabled: boolean
  enforcement?: 'enforce' | 'shadow'
  version: number
  assignment_count: number
  assignments?: Assignment[]
}

export interface DecisionFunction {
  id: string
  name: string
  description: string | null
  decision_fn: string
  decision_config: unknown
  evaluate_context: string
  on_error: string
  log_level: string
  is_enabled: boolean
  version: number
  policy_count: number
}

export interface AttributeDefinition {
  id: string
  key: string
  entity_type: string
  display_name: string
  value_type: string
  default_value: unknown
  allowed_values: unknown[] | null
  description: string | null
}

export interface QueryAuditEntry {
  id: string
  user_id: string
  username: string
  data_source_id: string
  datasource_name: string
  original_query: string
  rewritten_query: string | null
  policies_applied: string
  execution_time_ms: number | null
  client_info: string | null
  status: 'success' | 'error' | 'denied'
  error_message: string | null
  shadow_policies?: string | null
  shadow_denied?: boolean | null
  created_at: string
}

export interface AdminAuditEntry {
  id: string
  resource_type: string
  resource_id: string
  action: string
  actor_id: string | null
  changes: string | null
  created_at: string
}

export interface CatalogColumn {
  column_name: string
  data_type: string
  is_selected: boolean
}
export interface CatalogTable {
  table_name: string
  table_type: string
  is_selected: boolean
  columns: CatalogColumn[]
}
export interface CatalogSchema {
  schema_name: string
  schema_alias: string | null
  is_selected: boolean
  tables: CatalogTable[]
}

/** A user's request for a role or a datasource for a while. */
export interface AccessRequest {
  id: string
  user_id: string
  username: string
  kind: 'role' | 'datasource'
  role_id: string | null
  role_name: string | null
  datasource_id: string | null
  datasource_name: string | null
  reason: string
  duration_seconds: number
  status: 'pending' | 'approved' | 'denied' | 'cancelled'
  decided_by: string | null
  decided_at: string | null
  decision_comment: string | null
  granted_until: string | null
  created_at: string
}

/** One tagged table (`column_name` null) or column. */
export interface ObjectTags {
  schema_name: string
  table_name: string
  column_name: string | null
  tags: string[]
}

/** A tag the classifier proposes for a column. */
export interface TagProposal {
  id: string
  schema_name: string
  table_name: string
  column_name: string
  tag: string
  confidence: number
  evidence: string
  status: 'pending' | 'accepted' | 'rejected'
}
