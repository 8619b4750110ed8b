import type { CreateStoreOptions, Store } from '../src/index.js'
import { auditCases } from './cases/audit.cases.js'
import { auditRetentionCases } from './cases/audit-retention.cases.js'
import { datasourcesCases } from './cases/datasources.cases.js'
import { grantsCases } from './cases/grants.cases.js'
import { identityProvidersCases } from './cases/identity-providers.cases.js'
import { policiesCases } from './cases/policies.cases.js'
import { policyKindsCases } from './cases/policy-kinds.cases.js'
import { rolesCases } from './cases/roles.cases.js'
import { sessionDocsCases } from './cases/session-docs.cases.js'
import { sessionsCases } from './cases/sessions.cases.js'
import { tagsCases } from './cases/tags.cases.js'
import { usersCases } from './cases/users.cases.js'

/** Store options a case may set (query-audit retention and its clock). */
export type StoreTestOptions = Pick<
  CreateStoreOptions,
  'queryAuditRetentionDays' | 'clock' | 'onQueryAuditRetention'
>

/** Opens a fresh, migrated, empty store; each describe block gets its own. */
export type MakeStore = (options?: StoreTestOptions) => Promise<Store>

/** The store contract: every driver runs the same cases (drizzle's pg-common pattern). */
export function runResourceStoreCases(
  makeStore: MakeStore,
  options: { realConcurrency: boolean },
): void {
  usersCases(makeStore)
  rolesCases(makeStore)
  datasourcesCases(makeStore)
  policiesCases(makeStore, options)
  policyKindsCases(makeStore)
  sessionsCases(makeStore)
  sessionDocsCases(makeStore)
  auditCases(makeStore)
  auditRetentionCases(makeStore)
  grantsCases(makeStore)
  tagsCases(makeStore)
  identityProvidersCases(makeStore)
}
