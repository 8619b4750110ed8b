/** The shapes of the admin API objects the console reads (docs/admin-api.md). */

// The store's own types: the API answers with what the store returns. Type-only, so nothing
// of the store reaches the browser bundle.
export type {
  AccessRequest,
  AdminAuditEntry,
  Assignment,
  Datasource,
  DecisionFunction,
  EffectiveMember,
  IdentityProvider,
  Limits,
  ObjectTags,
  Policy,
  QueryAuditEntry,
  Role,
  RoleDetail,
  TagProposal,
  User,
  UserIdentity,
} from '@palisade/store'

import type { AttributeDefinitionRecord, Policy, ShadowReport } from '@palisade/store'

export interface RoleRef {
  id: string
  name: string
  is_active: boolean
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

/** A policy target as the API returns it (docs/policies.md#target-patterns). */
export type Target = Policy['targets'][number]

/** An attribute definition (docs/resources.md#attribute-definitions). */
export type AttributeDefinition = AttributeDefinitionRecord

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

/** `GET /policies/{id}/shadow-report` (docs/policies.md#shadow-mode). */
export type ShadowReportAnswer = ShadowReport
