import { testDecisionFunction } from '@palisade/core'
import type { CreateDecisionFunctionInput } from '@palisade/store'
import { decisionTestAnswer } from '../answers/check-answers.js'
import {
  decisionFunctionAnswer,
  decisionFunctionPageAnswer,
} from '../answers/decision-function-answers.js'
import { ApiError } from '../api-error.js'
import { toPageInput } from '../pagination.js'
import { created, noContent } from '../responses.js'
import { defineRoute, type RouteSpec } from '../route-table.js'
import { idParams } from '../schemas/common.js'
import {
  createDecisionFunctionBody,
  listDecisionFunctionsQuery,
  testDecisionFunctionBody,
  updateDecisionFunctionBody,
} from '../schemas/decision-functions.js'

const TAG = 'decision-functions'

function updateRoute(method: 'PUT' | 'PATCH') {
  return defineRoute({
    method,
    path: '/decision-functions/{id}',
    summary: 'Update a decision function (version required)',
    tag: TAG,
    status: 200,
    response: decisionFunctionAnswer,
    params: idParams,
    body: updateDecisionFunctionBody,
    exists: (deps, p) => deps.store.decisionFunctions.get(p.id),
    async handler({ c, deps, params, body, actorId }) {
      const input = body as Partial<CreateDecisionFunctionInput> & { version: number }
      return c.json(await deps.store.decisionFunctions.update(params.id, input, actorId))
    },
  })
}

/** Picks one of two spellings; both present with different values is a 422 (docs/decision-functions.md). */
function either(body: Record<string, unknown>, main: string, alt: string): unknown {
  const a = body[main]
  const b = body[alt]
  if (a !== undefined && b !== undefined && JSON.stringify(a) !== JSON.stringify(b)) {
    throw new ApiError(422, 'validation_failed', 'request body is invalid', [
      { field: alt, code: 'not_allowed', message: `${alt} differs from ${main}` },
    ])
  }
  return a ?? b
}

/** Decision functions (docs/decision-functions.md). */
export const decisionFunctionRoutes: RouteSpec[] = [
  defineRoute({
    method: 'POST',
    path: '/decision-functions/test',
    summary: 'Compile and run source once in the sandbox; nothing is stored',
    tag: TAG,
    status: 200,
    response: decisionTestAnswer,
    body: testDecisionFunctionBody,
    async handler({ c, body }) {
      const raw = body as Record<string, unknown>
      const result = await testDecisionFunction({
        decisionFn: body.decision_fn,
        decisionConfig: either(raw, 'decision_config', 'config') ?? {},
        evaluateContext: body.evaluate_context ?? undefined,
        testContext: either(raw, 'test_context', 'context') ?? {},
      })
      return c.json(result)
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/decision-functions',
    summary: 'List decision functions',
    tag: TAG,
    status: 200,
    response: decisionFunctionPageAnswer,
    query: listDecisionFunctionsQuery,
    async handler({ c, deps, query }) {
      const page = { ...toPageInput(query), search: query.search }
      return c.json(await deps.store.decisionFunctions.list(page))
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/decision-functions',
    summary: 'Create a decision function',
    tag: TAG,
    status: 201,
    response: decisionFunctionAnswer,
    body: createDecisionFunctionBody,
    async handler({ c, deps, body, actorId }) {
      const input = body as CreateDecisionFunctionInput
      const fn = await deps.store.decisionFunctions.create(input, actorId)
      return created(c, `/decision-functions/${fn.id}`, fn)
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/decision-functions/{id}',
    summary: 'Get a decision function',
    tag: TAG,
    status: 200,
    response: decisionFunctionAnswer,
    params: idParams,
    async handler({ c, deps, params }) {
      return c.json(await deps.store.decisionFunctions.get(params.id))
    },
  }),
  updateRoute('PUT'),
  updateRoute('PATCH'),
  defineRoute({
    method: 'DELETE',
    path: '/decision-functions/{id}',
    summary: 'Delete a decision function no policy references',
    tag: TAG,
    status: 204,
    params: idParams,
    async handler({ c, deps, params, actorId }) {
      await deps.store.decisionFunctions.delete(params.id, actorId)
      return noContent(c)
    },
  }),
]
