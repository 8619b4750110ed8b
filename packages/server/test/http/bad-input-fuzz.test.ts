import fc from 'fast-check'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { MISSING_ID, makeDatasource, makeUser, setup, type TestContext, unique } from './helpers.js'

/** Generated requests per route: enough to reach every field with every kind of bad value. */
const RUNS = Number(process.env['PALISADE_FUZZ_RUNS'] ?? 1000) >= 1000 ? 30 : 10

interface Operation {
  method: string
  path: string
  /** Property names of the JSON body schema, if the route takes a body. */
  fields: string[] | undefined
  /** Query parameter names. */
  query: string[]
}

let ctx: TestContext
let ids: Record<string, string>
let operations: Operation[]

beforeAll(async () => {
  ctx = await setup()
  const user = await makeUser(ctx)
  const datasource = await makeDatasource(ctx)
  const role = await ctx.store.roles.create({ name: unique('role') }, ctx.admin.id)
  const definition = await ctx.store.attributes.create(
    { key: unique('attr'), entity_type: 'user', value_type: 'string' },
    ctx.admin.id,
  )
  const policy = await ctx.store.policies.create(
    {
      name: unique('policy'),
      policy_type: 'row_filter',
      targets: [{ schemas: ['public'], tables: ['orders'] }],
      filter_expression: 'true',
    },
    ctx.admin.id,
  )
  const decision = await ctx.store.decisionFunctions.create(
    {
      name: unique('fn'),
      decision_fn: 'function evaluate(ctx, config) { return { fire: true } }',
      evaluate_context: 'session',
    },
    ctx.admin.id,
  )
  ids = {
    users: user.id,
    roles: role.id,
    datasources: datasource.id,
    'attribute-definitions': definition.id,
    policies: policy.id,
    'decision-functions': decision.id,
  }
  const { body } = await ctx.json('GET', '/api/v1/openapi.json')
  operations = []
  for (const [path, item] of Object.entries(body.paths as Record<string, Record<string, any>>)) {
    for (const [method, op] of Object.entries(item)) {
      const schema = op.requestBody?.content?.['application/json']?.schema
      operations.push({
        method: method.toUpperCase(),
        path,
        fields: schema ? Object.keys(schema.properties ?? {}) : undefined,
        query: (op.parameters ?? [])
          .filter((p: { in: string }) => p.in === 'query')
          .map((p: { name: string }) => p.name),
      })
    }
  }
})
afterAll(() => ctx.close())

/** The path with its parameters filled: the resource of the route's own kind, else a missing id. */
function concrete(path: string): string {
  return path.replace(/\{([a-z_]+)\}/g, (_m, name: string, offset: number) => {
    const kind = path.slice(0, offset).split('/').filter(Boolean).at(-1) ?? ''
    return name === 'id' ? (ids[kind] ?? MISSING_ID) : MISSING_ID
  })
}

/** Strings that have broken servers: NUL and control characters, huge, odd Unicode. */
const hostileString = fc.oneof(
  fc.string(),
  fc.string().map((s) => `${s}\u0000${s}`),
  fc.constantFrom('\u0000', 'a\u0000b', '\u0001\u0002\u001f\u007f', '\r\n\t', '\ud800', '\uffff'),
  fc.constantFrom("'; DROP TABLE users; --", '{user.tenant}', '$$', '\\', '%s%n', '../../etc'),
  fc.integer({ min: 1, max: 300_000 }).map((n) => 'x'.repeat(n)),
)

const deepJson = fc.integer({ min: 20, max: 1_000 }).map((depth) => {
  let value: unknown = 'leaf'
  for (let i = 0; i < depth; i++) value = i % 2 ? [value] : { nested: value }
  return value
})

const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileString,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.array(hostileString, { maxLength: 5 }),
  fc.dictionary(hostileString, hostileString, { maxKeys: 3 }),
  deepJson,
  fc.anything(),
)

function bodies(fields: readonly string[]): fc.Arbitrary<unknown> {
  const known =
    fields.length === 0
      ? fc.constant({})
      : fc.record(Object.fromEntries(fields.map((f) => [f, hostileValue])), {
          requiredKeys: [],
        })
  return fc.oneof(
    { weight: 4, arbitrary: known },
    // Known fields beside unknown ones.
    fc
      .tuple(known, fc.dictionary(hostileString, hostileValue, { maxKeys: 3 }))
      .map(([a, b]) => ({ ...b, ...(a as object) })),
    deepJson,
    fc.anything(),
  )
}

/** Whether a URL can carry the text (a lone surrogate cannot be percent-encoded). */
function encodable(text: string): boolean {
  try {
    encodeURIComponent(text)
    return true
  } catch {
    return false
  }
}

async function adminAuditTotal(): Promise<number> {
  const { body } = await ctx.json('GET', '/api/v1/audit/admin?page_size=1')
  return body.total as number
}

function expectErrorEnvelope(status: number, body: any, label: string): void {
  expect(status, label).toBeLessThan(500)
  if (status >= 400) {
    expect(typeof body?.error?.code, label).toBe('string')
    expect(typeof body?.error?.message, label).toBe('string')
  }
}

describe('admin API: any malformed input gets 4xx with the error envelope', () => {
  it('never answers 5xx to generated bodies on any route, and stores nothing it refuses', async () => {
    const withBody = operations.filter((o) => o.fields !== undefined)
    expect(withBody.length).toBeGreaterThan(15)
    for (const op of withBody) {
      const path = concrete(op.path)
      await fc.assert(
        fc.asyncProperty(bodies(op.fields ?? []), async (body) => {
          const before = await adminAuditTotal()
          const res = await ctx.json(op.method, `/api/v1${path}`, { body })
          const label = `${op.method} ${op.path} ${JSON.stringify(body)?.slice(0, 200)}`
          expectErrorEnvelope(res.status, res.body, label)
          // Refused: nothing was changed (every change writes an admin audit entry).
          if (res.status >= 400 && op.path !== '/auth/login') {
            expect(await adminAuditTotal(), label).toBe(before)
          }
        }),
        { numRuns: RUNS, seed: 0x0bad, endOnFailure: true },
      )
    }
  })

  it('never answers 5xx to generated path and query parameters on any route', async () => {
    const anyText = fc.oneof(hostileString, fc.constantFrom('-1', '1e309', 'NaN', 'null', '[]'))
    for (const op of operations) {
      const names = [...op.query, 'unknown_parameter']
      await fc.assert(
        fc.asyncProperty(
          fc.dictionary(fc.constantFrom(...names), anyText, { maxKeys: 4 }),
          fc.oneof(
            fc.constant(undefined),
            anyText.filter((s) => s.length < 2000 && encodable(s)),
          ),
          async (query, id) => {
            const search = new URLSearchParams(query as Record<string, string>).toString()
            let path = concrete(op.path)
            if (id !== undefined && op.path.includes('{id}')) {
              path = op.path
                .replace('{id}', encodeURIComponent(id))
                .replace(/\{[a-z_]+\}/g, MISSING_ID)
            }
            const body = op.fields === undefined ? undefined : {}
            const res = await ctx.json(op.method, `/api/v1${path}?${search}`, { body })
            expectErrorEnvelope(
              res.status,
              res.body,
              `${op.method} ${path}?${search.slice(0, 200)}`,
            )
          },
        ),
        { numRuns: Math.ceil(RUNS / 2), seed: 0x0bad, endOnFailure: true },
      )
    }
  })

  it('refuses a body nested 100,000 deep with 400 malformed_json', async () => {
    const deep = `{"name":${'['.repeat(100_000)}${']'.repeat(100_000)}}`
    const { status, body } = await ctx.json('POST', '/api/v1/roles', { body: deep })
    expect(status).toBe(400)
    expect(body.error).toMatchObject({
      code: 'malformed_json',
      message: 'the request body nests deeper than 32 levels',
    })
  })

  it('refuses a NUL character in a name, an attribute value and an expression with 422', async () => {
    const cases: [string, string, unknown][] = [
      ['POST', '/api/v1/users', { username: 'a\u0000b', password: 'Admin-Passw0rd!' }],
      ['PUT', `/api/v1/users/${ids['users']}`, { attributes: { tenant: 'x\u0000' } }],
      [
        'POST',
        '/api/v1/policies',
        {
          name: 'nul\u0000policy',
          policy_type: 'row_filter',
          targets: [{ schemas: ['public'], tables: ['t'] }],
          filter_expression: 'true',
        },
      ],
      ['POST', '/api/v1/policies/validate-expression', { expression: "a = 'x\u0000'" }],
    ]
    for (const [method, path, body] of cases) {
      const before = await adminAuditTotal()
      const { status, body: answer } = await ctx.json(method, path, { body })
      expect(status, path).toBe(422)
      expect(answer.error.code).toBe('validation_failed')
      expect(answer.error.details[0].message).toContain('must not contain NUL characters')
      expect(await adminAuditTotal()).toBe(before)
    }
  })
})
