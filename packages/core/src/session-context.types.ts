import type { Catalog, ColumnAnchor, TableRelationship } from './catalog.types.js'
import type { EffectivePolicy } from './policy/policy.types.js'

export type AttributeValueType = 'string' | 'integer' | 'boolean' | 'list'

/** A `user` attribute definition (docs/resources.md#attribute-definitions). */
export interface AttributeDefinition {
  key: string
  valueType: AttributeValueType
  defaultValue: unknown
}

export type AccessMode = 'open' | 'policy_required'

export interface SessionUser {
  id: string
  username: string
  /** Active role names, direct and inherited (docs/roles-and-access.md#roles). */
  roles: readonly string[]
  /** The user's own attribute values by key. */
  attributes: Readonly<Record<string, unknown>>
}

export interface SessionDatasource {
  id?: string
  name: string
  accessMode: AccessMode
  /**
   * The upstream's `server_version_num` (for example 150019), when known: it picks the column
   * lists of the virtual `pg_catalog` relations. Defaults to the PostgreSQL 15 lists.
   */
  serverVersion?: number
  /**
   * The key of keyed-hash masks (`mask.hash`), unique to the datasource; the store derives it
   * from its secret key. Never shown to the user: EXPLAIN of a statement that uses it is
   * refused and upstream errors that quote it are scrubbed.
   */
  maskKey?: string
}

/** Everything a session is compiled from; the store builds it, tests write it by hand. */
export interface SessionInput {
  user: SessionUser
  datasource: SessionDatasource
  catalog: Catalog
  attributeDefinitions: readonly AttributeDefinition[]
  policies: readonly EffectivePolicy[]
  relationships?: readonly TableRelationship[]
  anchors?: readonly ColumnAnchor[]
  /** Changes whenever the session is rebuilt; part of the rewrite cache key. */
  epoch?: number
  /**
   * When a grant window this session depends on starts or ends (epoch milliseconds): a live
   * session is rebuilt at its first statement from then on.
   */
  validUntil?: number
}
