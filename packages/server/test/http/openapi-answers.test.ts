import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { answerChecker } from './answer-check.js'
import { setup, type TestContext } from './helpers.js'

/**
 * Success answers in the OpenAPI document. Every answer the HTTP suite receives is validated
 * against the document (helpers.ts), so a schema that differs from what a route sends fails the
 * test that met it; here: that the check bites, and which routes still answer untyped JSON.
 */
let ctx: TestContext
beforeAll(async () => {
  ctx = await setup()
})
afterAll(() => ctx.close())

/** Routes whose success answer has no schema yet: the list may only shrink (issue 45). */
const UNTYPED = new Set([
  'GET /api/v1/datasource-types',
  'GET /api/v1/identity-providers',
  'POST /api/v1/identity-providers',
  'GET /api/v1/identity-providers/{id}',
  'PUT /api/v1/identity-providers/{id}',
  'PATCH /api/v1/identity-providers/{id}',
  'GET /api/v1/datasources/{id}/catalog',
  'POST /api/v1/datasources/{id}/discover',
  'GET /api/v1/datasources/{id}/discover/{job_id}',
  'GET /api/v1/datasources/{id}/tags',
  'PUT /api/v1/datasources/{id}/tags',
  'POST /api/v1/datasources/{id}/tags',
  'GET /api/v1/datasources/{id}/tag-proposals',
  'POST /api/v1/datasources/{id}/tag-proposals/{proposal_id}/accept',
  'POST /api/v1/datasources/{id}/tag-proposals/{proposal_id}/reject',
  'POST /api/v1/datasources/{id}/classify',
  'GET /api/v1/policies/{id}/anchor-coverage',
  'GET /api/v1/policies/{id}/shadow-report',
  'POST /api/v1/preview',
  'POST /api/v1/simulations',
  'GET /api/v1/policy-bundles',
  'POST /api/v1/policy-bundles',
  'GET /api/v1/audit/queries/timeline',
  'GET /api/v1/audit/queries/export',
  'GET /api/v1/audit/admin/export',
  'GET /api/v1/audit/verify',
])

interface Operation {
  responses: Record<string, { content?: Record<string, { schema: Record<string, unknown> }> }>
}

describe('typed success answers in the OpenAPI document', () => {
  it('gives every route but the listed ones a schema of its success answer', async () => {
    const doc = (await ctx.json('GET', '/api/v1/openapi.json', { token: null })).body as {
      paths: Record<string, Record<string, Operation>>
    }
    const untyped: string[] = []
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const [status, answer] =
          Object.entries(operation.responses).find(([s]) => s !== 'default') ?? []
        if (status === '204') continue
        const schema = Object.values(answer?.content ?? {})[0]?.schema
        if (JSON.stringify(schema) === JSON.stringify({ type: ['object', 'array'] })) {
          untyped.push(`${method.toUpperCase()} ${path}`)
        }
      }
    }
    const unexpected = untyped.filter((route) => !UNTYPED.has(route))
    expect(unexpected).toEqual([])
  })

  it('rejects an answer that differs from its schema, field by field', async () => {
    const check = await answerChecker(ctx.app)
    const user = (await ctx.json('GET', `/api/v1/users/${ctx.admin.id}`)).body
    expect(check('GET', `/api/v1/users/${ctx.admin.id}`, 200, user)).toEqual([])
    const { email: _dropped, ...withoutEmail } = user
    const problems = check('GET', `/api/v1/users/${ctx.admin.id}`, 200, {
      ...withoutEmail,
      is_admin: 'yes',
      password: 'leaked',
    })
    expect(problems.join('\n')).toMatch(/must have required property 'email'/)
    expect(problems.join('\n')).toMatch(/\/is_admin must be boolean/)
    expect(problems.join('\n')).toMatch(/must NOT have additional properties.*password/)
  })

  it('types a page of a collection with its items', async () => {
    const check = await answerChecker(ctx.app)
    const page = (await ctx.json('GET', '/api/v1/users')).body
    expect(check('GET', '/api/v1/users', 200, page)).toEqual([])
    expect(check('GET', '/api/v1/users', 200, { ...page, total: '1' }).join()).toMatch(/total/)
  })
})
