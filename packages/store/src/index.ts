/**
 * @module
 * `@palisade/store`: Palisade's resources, validation, admin and query audit, role graph,
 * session contexts and change feed, on embedded PGlite or PostgreSQL (drizzle-orm).
 */
export type {
  AccessRequest,
  AccessRequestStatus,
  AccessRequestsService,
} from './access/access-requests-service.js'
export type {
  AccessService,
  AccessWindow,
  DatasourceAccessSummary,
} from './access/access-service.js'
export { SYSTEM_ACTOR_ID } from './access/grant-expiry.js'
export { type GrantWindow, type WindowInput, windowFields } from './access/grant-window.js'
export type {
  AttributeDefinitionRecord,
  AttributesService,
  CreateAttributeInput,
} from './attributes/attributes-service.js'
export { RESERVED_USER_KEYS } from './attributes/attributes-service.js'
export type { ExportedLink } from './audit/audit-chain.js'
export type { AdminAuditEntry, AdminAuditFilter, AdminAuditLog } from './audit/audit-log.js'
export type {
  QueryAuditRemoval,
  QueryAuditRetentionEvent,
  RetentionBreak,
} from './audit/audit-retention.js'
export type {
  AuditLogName,
  AuditVerification,
  ChainBreak,
  LogVerification,
} from './audit/audit-verify.js'
export type {
  AuditedActions,
  PreviewAuditEntry,
  SimulationAuditEntry,
} from './audit/audited-actions.js'
export type {
  LoginAudit,
  LoginAuditEntry,
  LoginAuditFilter,
  LoginAuditRecord,
  LoginOutcome,
  LoginPlane,
} from './audit/login-audit.js'
export type {
  ExportedQueryAuditEntry,
  QueryAuditEntry,
  QueryAuditFilter,
} from './audit/query-audit-reads.js'
export type {
  QueryAuditBucket,
  QueryAuditTimeline,
  QueryAuditTimelineFilter,
} from './audit/query-audit-timeline.js'
export type {
  QueryAuditRecord,
  QueryAuditWriter,
  QueryAuditWriterOptions,
} from './audit/query-audit-writer.js'
export type { ShadowReport, ShadowReportFilter } from './audit/shadow-report.js'
export type { CatalogPageFilter } from './catalog/catalog-page.js'
export type { CatalogJobOptions, CatalogService } from './catalog/catalog-service.js'
export type {
  CatalogSyncReport,
  UpstreamCatalogSnapshot,
  UpstreamColumn,
} from './catalog/catalog-sync.js'
export type {
  CatalogTagsService,
  ClassifiedColumn,
  ObjectTags,
  TagProposal,
} from './catalog/catalog-tags-service.js'
export {
  type CatalogView,
  catalogIds,
  exposedOf,
  type SaveColumnInput,
  type SaveSchemaInput,
  type SaveTableInput,
} from './catalog/catalog-view.js'
export {
  bodySchemas,
  boundedString,
  identName,
  intRange,
  issueDetails,
  jsonObject,
  policyName,
  uuidString,
} from './contract.js'
export {
  type CreateStoreOptions,
  createStore,
  type ScopedStore,
  type Store,
} from './create-store.js'
export {
  DATASOURCE_TYPES,
  DS_TYPES,
  type DsType,
  type PgliteDatasourceConfig,
  type PostgresDatasourceConfig,
  SSL_MODES,
  type SslMode,
} from './datasources/datasource-config.js'
export {
  type CreateDatasourceInput,
  type Datasource,
  type DatasourceConnection,
  type DatasourcesService,
  POOL_MODES,
  type PoolMode,
} from './datasources/datasources-service.js'
export type {
  CreateDecisionFunctionInput,
  DecisionFunction,
  DecisionFunctionsService,
} from './decision-functions/decision-functions-service.js'
export type { AdminClaimRefusal, AdminSignIn } from './identity-providers/admin-sign-in.js'
export type { ClaimRefusal, ClaimSignIn } from './identity-providers/claim-sign-in.js'
export { usernameOf } from './identity-providers/claim-values.js'
export {
  type CreateIdentityProviderInput,
  issuerProblem,
} from './identity-providers/identity-provider-schemas.js'
export type {
  IdentityProvider,
  IdentityProvidersService,
} from './identity-providers/identity-providers-service.js'
export type {
  AdminClaim,
  AttributeMapping,
  RoleMapping,
} from './identity-providers/identity-providers-tables.js'
export type {
  ConsumedSsoSignIn,
  PendingSsoSignIn,
  SsoSignInsService,
} from './identity-providers/sso-sign-ins-service.js'
export type {
  LinkUserIdentityInput,
  UserIdentity,
  UserIdentityLinks,
} from './identity-providers/user-identity-links.js'
export type {
  ChangeEvent,
  ChangeFeedEvent,
  ChangeListener,
  ChangeNotice,
  InstanceSignal,
} from './kernel/change-feed.js'
export { isStoreUnreachable } from './kernel/db.js'
export {
  type ErrorDetail,
  isStoreError,
  ResourceConflictError,
  ResourceNotFoundError,
  SessionDeniedError,
  StoreError,
  type StoreErrorCode,
  ValidationError,
} from './kernel/errors.js'
export {
  type EffectiveLimits,
  effectiveLimitsView,
  hasLimits,
  type Limits,
  type RowLimitAction,
  tightestLimits,
} from './kernel/limits.js'
export {
  AUDIT_ACTIONS,
  AUDIT_RESOURCE_TYPES,
  type AuditAction,
  type AuditResourceType,
  MissingAuditEntryError,
} from './kernel/mutation.js'
export type { Page, PageInput } from './kernel/pagination.js'
export type { EffectiveMember } from './kernel/role-graph.js'
export {
  type CounterAdmission,
  type CounterLimits,
  SLOT_TTL_MS,
  type StatementCounters,
} from './limits/statement-counters.js'
export type {
  Assignment,
  AssignmentsService,
  AssignPolicyInput,
} from './policies/assignments-service.js'
export type { EffectivePolicyEntry } from './policies/effective-policies.js'
export type {
  CreatePolicyInput,
  PoliciesService,
  Policy,
  UpdatePolicyInput,
} from './policies/policies-service.js'
export {
  POLICY_ENFORCEMENTS,
  POLICY_TYPES,
  type PolicyEnforcement,
  policyTargetSchema,
} from './policies/policy-validation.js'
export type { Anchor, Relationship } from './relationships/relationship-rows.js'
export type { RelationshipsService } from './relationships/relationships-service.js'
export type { RoleDetail, RoleImpact } from './roles/role-detail.js'
export type { Role } from './roles/role-rows.js'
export type { CreateRoleInput, RolesService } from './roles/roles-service.js'
export type {
  LimitedSessionInput,
  SessionContextBuilder,
} from './sessions/session-context-builder.js'
export {
  createScramVerifier,
  formatScramVerifier,
  parseScramVerifier,
  SCRAM_ITERATIONS,
  type ScramVerifier,
  verifyScramPassword,
} from './users/scram.js'
export type { TokensService } from './users/tokens-service.js'
export type {
  AuthInfo,
  CreateUserInput,
  PasswordCheck,
  UpdateUserInput,
  User,
  UsersService,
} from './users/users-service.js'
