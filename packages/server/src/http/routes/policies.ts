import type { CreatePolicyInput, UpdatePolicyInput } from '@palisade/store'
import { expressionCheckAnswer } from '../answers/check-answers.js'
import { policyAnswer, policyPageAnswer, shadowReportAnswer } from '../answers/policy-answers.js'
import { toPageInput } from '../pagination.js'
import { created, noContent } from '../responses.js'
import { defineRoute, type RouteSpec } from '../route-table.js'
import { idParams } from '../schemas/common.js'
import {
  createPolicyBody,
  listPoliciesQuery,
  shadowReportQuery,
  updatePolicyBody,
  validateExpressionBody,
} from '../schemas/policies.js'

const TAG = 'policies'

function updateRoute(method: 'PUT' | 'PATCH') {
  return defineRoute({
    method,
    path: '/policies/{id}',
    summary: 'Update a policy (version required; every accepted update increments it)',
    tag: TAG,
    status: 200,
    response: policyAnswer,
    params: idParams,
    body: updatePolicyBody,
    exists: (deps, p) => deps.store.policies.get(p.id),
    async handler({ c, deps, params, body, actorId }) {
      const input = body as UpdatePolicyInput
      return c.json(await deps.store.policies.update(params.id, input, actorId))
    },
  })
}

/** Policies (docs/resources.md#policies). */
export const policyRoutes: RouteSpec[] = [
  defineRoute({
    method: 'GET',
    path: '/policies/{id}/shadow-report',
    summary:
      'What a policy in shadow mode would have done: statements matched and refused, by user, with examples',
    tag: TAG,
    status: 200,
    response: shadowReportAnswer,
    params: idParams,
    query: shadowReportQuery,
    exists: (deps, p) => deps.store.policies.get(p.id),
    async handler({ c, deps, params, query }) {
      return c.json(
        await deps.store.audit.queries.shadowReport(params.id, {
          from: query.from,
          to: query.to,
          examples: query.examples,
        }),
      )
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/policies/validate-expression',
    summary: 'Parse a filter or mask expression without saving it',
    tag: TAG,
    status: 200,
    response: expressionCheckAnswer,
    body: validateExpressionBody,
    async handler({ c, deps, body }) {
      return c.json(await deps.store.policies.validateExpression(body))
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/policies',
    summary: 'List policies',
    tag: TAG,
    status: 200,
    response: policyPageAnswer,
    query: listPoliciesQuery,
    async handler({ c, deps, query }) {
      const filter = { ...toPageInput(query), search: query.search, policy_type: query.policy_type }
      return c.json(await deps.store.policies.list(filter))
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/policies',
    summary: 'Create a policy',
    tag: TAG,
    status: 201,
    response: policyAnswer,
    body: createPolicyBody,
    async handler({ c, deps, body, actorId }) {
      const policy = await deps.store.policies.create(body as CreatePolicyInput, actorId)
      return created(c, `/policies/${policy.id}`, policy)
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/policies/{id}',
    summary: 'Get a policy with its assignments',
    tag: TAG,
    status: 200,
    response: policyAnswer,
    params: idParams,
    handler: async ({ c, deps, params }) => c.json(await deps.store.policies.get(params.id)),
  }),
  updateRoute('PUT'),
  updateRoute('PATCH'),
  defineRoute({
    method: 'DELETE',
    path: '/policies/{id}',
    summary: 'Delete a policy and its assignments',
    tag: TAG,
    status: 204,
    params: idParams,
    async handler({ c, deps, params, actorId }) {
      await deps.store.policies.delete(params.id, actorId)
      return noContent(c)
    },
  }),
]
