/**
 * @module
 * `@palisade/store`: Palisade's resources, validation, admin and query audit, role graph,
 * session contexts and change feed, on embedded PGlite or PostgreSQL (drizzle-orm).
 */
export type {
  AccessRequest,
  AccessRequestStatus,
  AccessRequestsService,
} from './access-requests-service.js'
export type { AccessService, AccessWindow, DatasourceAccessSummary } from './access-service.js'
export type { Assignment, AssignmentsService, AssignPolicyInput } from './assignments-service.js'
export type {
  AttributeDefinitionRecord,
  AttributesService,
  CreateAttributeInput,
} from './attributes-service.js'
export { RESERVED_USER_KEYS } from './attributes-service.js'
export type { ExportedLink } from './audit-chain.js'
export type { AdminAuditEntry, AdminAuditFilter, AdminAuditLog } from './audit-log.js'
export type {
  AuditLogName,
  AuditVerification,
  ChainBreak,
  LogVerification,
} from './audit-verify.js'
export type {
  AuditedActions,
  PreviewAuditEntry,
  SimulationAuditEntry,
} from './audited-actions.js'
export type {
  CatalogService,
  CatalogView,
  SaveColumnInput,
  SaveSchemaInput,
  SaveTableInput,
} from './catalog-service.js'
export { catalogIds, exposedOf } from './catalog-service.js'
export type {
  CatalogSyncReport,
  UpstreamCatalogSnapshot,
  UpstreamColumn,
} from './catalog-sync.js'
export type {
  CatalogTagsService,
  ClassifiedColumn,
  ObjectTags,
  TagProposal,
} from './catalog-tags-service.js'
export type {
  ChangeEvent,
  ChangeFeedEvent,
  ChangeListener,
  ChangeNotice,
  InstanceSignal,
} from './change-feed.js'
export {
  type CreateStoreOptions,
  createStore,
  type ScopedStore,
  type Store,
} from './create-store.js'
export { DATASOURCE_TYPES, DS_TYPES, type DsType } from './datasource-config.js'
export {
  type CreateDatasourceInput,
  type Datasource,
  type DatasourceConnection,
  type DatasourcesService,
  POOL_MODES,
  type PoolMode,
} from './datasources-service.js'
export { isStoreUnreachable } from './db.js'
export type {
  CreateDecisionFunctionInput,
  DecisionFunction,
  DecisionFunctionsService,
} from './decision-functions-service.js'
export type { EffectivePolicyEntry } from './effective-policies.js'
export {
  type ErrorDetail,
  isStoreError,
  ResourceConflictError,
  ResourceNotFoundError,
  SessionDeniedError,
  StoreError,
  type StoreErrorCode,
  ValidationError,
} from './errors.js'
export { SYSTEM_ACTOR_ID } from './grant-expiry.js'
export { type GrantWindow, type WindowInput, windowFields } from './grant-window.js'
export type {
  LoginAudit,
  LoginAuditEntry,
  LoginAuditFilter,
  LoginAuditRecord,
  LoginOutcome,
  LoginPlane,
} from './login-audit.js'
export {
  AUDIT_ACTIONS,
  AUDIT_RESOURCE_TYPES,
  type AuditAction,
  type AuditResourceType,
  MissingAuditEntryError,
} from './mutation.js'
export type { Page, PageInput } from './pagination.js'
export type {
  CreatePolicyInput,
  PoliciesService,
  Policy,
  PolicyEnforcement,
  UpdatePolicyInput,
} from './policies-service.js'
export { POLICY_ENFORCEMENTS, POLICY_TYPES, policyTargetSchema } from './policies-service.js'
export type {
  QueryAuditBucket,
  QueryAuditTimeline,
  QueryAuditTimelineFilter,
} from './query-audit-timeline.js'
export type {
  ExportedQueryAuditEntry,
  QueryAuditEntry,
  QueryAuditFilter,
  QueryAuditRecord,
  QueryAuditWriter,
  QueryAuditWriterOptions,
} from './query-audit-writer.js'
export type { Anchor, Relationship, RelationshipsService } from './relationships-service.js'
export type { EffectiveMember } from './role-graph.js'
export type {
  CreateRoleInput,
  Role,
  RoleDetail,
  RoleImpact,
  RolesService,
} from './roles-service.js'
export {
  createScramVerifier,
  formatScramVerifier,
  parseScramVerifier,
  SCRAM_ITERATIONS,
  type ScramVerifier,
  verifyScramPassword,
} from './scram.js'
export type { SessionContextBuilder } from './session-context-builder.js'
export type { ShadowReport, ShadowReportFilter } from './shadow-report.js'
export type { TokensService } from './tokens-service.js'
export type {
  AuthInfo,
  CreateUserInput,
  PasswordCheck,
  UpdateUserInput,
  User,
  UsersService,
} from './users-service.js'
