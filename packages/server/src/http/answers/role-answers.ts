import type { EffectiveMember, Role, RoleDetail, RoleImpact } from '@palisade/store'
import * as v from 'valibot'
import { answerOf, id, instant, nullableString, pageOf } from './answer-of.js'
import { limitsAnswer } from './limits-answers.js'

const roleFields = {
  id,
  name: v.string(),
  description: nullableString,
  is_active: v.boolean(),
  limits: limitsAnswer,
  direct_member_count: v.number(),
  created_at: instant,
  updated_at: instant,
}

/** A role as lists, creates and updates answer it (docs/roles-and-access.md#roles). */
export const roleAnswer = answerOf<Role>()(v.strictObject(roleFields))

export const rolePageAnswer = pageOf(roleAnswer)

const roleRef = v.strictObject({ id, name: v.string(), is_active: v.boolean() })

/** `GET /roles/{id}`: the role with its members, edges, and what it grants. */
export const roleDetailAnswer = answerOf<RoleDetail>()(
  v.strictObject({
    ...roleFields,
    effective_member_count: v.number(),
    members: v.array(
      v.strictObject({
        id,
        username: v.string(),
        valid_from: v.optional(v.nullable(instant)),
        valid_until: v.optional(v.nullable(instant)),
      }),
    ),
    parent_roles: v.array(roleRef),
    child_roles: v.array(roleRef),
    policy_assignments: v.array(
      v.strictObject({
        assignment_id: id,
        policy_id: id,
        policy_name: v.string(),
        datasource_id: id,
        datasource_name: v.string(),
        priority: v.number(),
        source: v.string(),
      }),
    ),
    datasource_access: v.array(
      v.strictObject({ datasource_id: id, datasource_name: v.string(), source: v.string() }),
    ),
  }),
)

/** `GET /roles/{id}/impact` and the answer of `DELETE /roles/{id}`. */
export const roleImpactAnswer = answerOf<RoleImpact>()(
  v.strictObject({
    role_id: id,
    affected_users: v.number(),
    affected_assignments: v.number(),
    affected_datasource_access: v.number(),
    affected_child_roles: v.number(),
  }),
)

/** `GET /roles/{id}/effective-members`: members through inheritance, with their direct role. */
export const effectiveMembersAnswer = v.array(
  answerOf<EffectiveMember>()(
    v.strictObject({
      user_id: id,
      username: v.string(),
      direct_role_id: id,
      direct_role_name: v.string(),
      source: v.string(),
    }),
  ),
)
