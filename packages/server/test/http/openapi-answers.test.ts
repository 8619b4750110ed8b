import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { answerChecker } from './answer-check.js'
import { setup, type TestContext } from './helpers.js'

/**
 * Success answers in the OpenAPI document. Every answer the HTTP suite receives is validated
 * against the document (helpers.ts), so a schema that differs from what a route sends fails the
 * test that met it; here: that every route has one, and that the check bites.
 */
let ctx: TestContext
beforeAll(async () => {
  ctx = await setup()
})
afterAll(() => ctx.close())

interface Operation {
  responses: Record<string, { content?: Record<string, { schema: Record<string, unknown> }> }>
}

describe('typed success answers in the OpenAPI document', () => {
  it('gives every route a schema of its success answer, in each media type it answers', async () => {
    const doc = (await ctx.json('GET', '/api/v1/openapi.json', { token: null })).body as {
      paths: Record<string, Record<string, Operation>>
    }
    const untyped: string[] = []
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        const [status, answer] =
          Object.entries(operation.responses).find(([s]) => s !== 'default') ?? []
        if (status === '204') continue
        for (const media of Object.values(answer?.content ?? {})) {
          if (JSON.stringify(media.schema) === JSON.stringify({ type: ['object', 'array'] })) {
            untyped.push(`${method.toUpperCase()} ${path}`)
          }
        }
      }
    }
    expect(untyped).toEqual([])
    const exports = doc.paths['/api/v1/audit/queries/export']?.['get']?.responses['200']?.content
    expect(Object.keys(exports ?? {}).sort()).toEqual(['application/x-ndjson', 'text/csv'])
    const bundles = doc.paths['/api/v1/policy-bundles']?.['get']?.responses['200']?.content
    expect(Object.keys(bundles ?? {}).sort()).toEqual(['application/json', 'application/yaml'])
  })

  it('checks NDJSON answers line by line and YAML answers as the document they hold', async () => {
    const check = await answerChecker(ctx.app)
    const res = await ctx.call('GET', '/api/v1/audit/admin/export?format=ndjson')
    const text = await res.text()
    const type = res.headers.get('content-type') ?? ''
    expect(text.trim().split('\n').length).toBeGreaterThan(0)
    expect(check('GET', '/api/v1/audit/admin/export', 200, text, type)).toEqual([])
    const broken = `${text}${JSON.stringify({ id: 'not an entry' })}\n`
    expect(check('GET', '/api/v1/audit/admin/export', 200, broken, type).join()).toMatch(/line/)
    const yaml = await (await ctx.call('GET', '/api/v1/policy-bundles')).text()
    const yamlType = 'application/yaml; charset=utf-8'
    expect(check('GET', '/api/v1/policy-bundles', 200, yaml, yamlType)).toEqual([])
    const wrong = yaml.replace(/^version: .*$/m, 'version: 2')
    expect(check('GET', '/api/v1/policy-bundles', 200, wrong, yamlType).join()).toMatch(/version/)
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
