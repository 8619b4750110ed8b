import { createAttributeSchema, updateAttributeSchema } from './attributes/attributes-service.js'
import {
  createDatasourceSchema,
  updateDatasourceSchema,
} from './datasources/datasources-service.js'
import {
  createDecisionFunctionSchema,
  updateDecisionFunctionSchema,
} from './decision-functions/decision-functions-service.js'
import {
  createIdentityProviderSchema,
  updateIdentityProviderSchema,
} from './identity-providers/identity-provider-schemas.js'
import { linkUserIdentitySchema } from './identity-providers/user-identity-links.js'
import { assignmentSchema } from './policies/assignments-service.js'
import {
  createPolicySchema,
  policyTargetSchema,
  updatePolicySchema,
} from './policies/policy-validation.js'
import { anchorSchema, relationshipSchema } from './relationships/relationships-service.js'
import { createRoleSchema, roleParentSchema, updateRoleSchema } from './roles/roles-service.js'
import { createUserSchema, passwordSchema, updateUserSchema } from './users/user-schemas.js'

export {
  boundedString,
  detailsOf as issueDetails,
  identName,
  intRange,
  jsonObject,
  policyName,
  uuidString,
} from './kernel/validation.js'

/**
 * The request bodies the store accepts, as the valibot schemas it validates them with. The
 * admin API validates requests and writes its OpenAPI document with these same schemas, so a
 * rule and its message exist once (docs/resources.md).
 */
export const bodySchemas = {
  user: { create: createUserSchema, update: updateUserSchema, password: passwordSchema },
  role: { create: createRoleSchema, update: updateRoleSchema, parent: roleParentSchema },
  datasource: { create: createDatasourceSchema, update: updateDatasourceSchema },
  attribute: { create: createAttributeSchema, update: updateAttributeSchema },
  policy: { create: createPolicySchema, update: updatePolicySchema, target: policyTargetSchema },
  decisionFunction: { create: createDecisionFunctionSchema, update: updateDecisionFunctionSchema },
  identityProvider: { create: createIdentityProviderSchema, update: updateIdentityProviderSchema },
  userIdentity: linkUserIdentitySchema,
  relationship: relationshipSchema,
  anchor: anchorSchema,
  assignment: assignmentSchema,
} as const
