/**
 * The admin API validates bodies with the store's own schemas: a bad body gets the same field,
 * code and message whether it comes through HTTP or straight to the store (an embedder, a
 * bundle), and the OpenAPI document describes those schemas.
 */
import { isStoreError } from '@palisade/store'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { setup, type TestContext, unique } from './helpers.js'

interface Detail {
  field: string
  code: string
  message: string
}

describe('one contract for the admin API and the store', () => {
  let t: TestContext
  beforeAll(async () => {
    t = await setup()
  })
  afterAll(async () => {
    await t.close()
  })

  /** The details the store throws for `call`, sorted by field. */
  async function storeDetails(call: () => Promise<unknown>): Promise<Detail[]> {
    try {
      await call()
    } catch (error) {
      if (isStoreError(error) && error.status === 422) return sortDetails(error.details ?? [])
      throw error
    }
    throw new Error('the store accepted the body')
  }

  const sortDetails = (details: readonly Detail[]) =>
    [...details]
      .map(({ field, code, message }) => ({ field, code, message }))
      .sort((a, b) => (a.field < b.field ? -1 : a.field > b.field ? 1 : 0))

  async function httpDetails(path: string, body: unknown): Promise<Detail[]> {
    const { status, body: answer } = await t.json('POST', path, { body })
    expect(status).toBe(422)
    return sortDetails(answer.error.details as Detail[])
  }

  it('answers the same details through HTTP and the store, resource by resource', async () => {
    const cases: { path: string; body: Record<string, unknown>; direct: () => Promise<unknown> }[] =
      [
        {
          path: '/api/v1/policies',
          body: { name: unique('p'), policy_type: 'row_guard', targets: [] },
          direct: () => t.store.policies.create(cases[0]?.body as never, t.admin.id),
        },
        {
          path: '/api/v1/users',
          body: { username: 'x', password: 'short', email: 'nobody', attributes: [1] },
          direct: () => t.store.users.create(cases[1]?.body as never, t.admin.id),
        },
        {
          path: '/api/v1/roles',
          body: { name: '9lives', description: 'd'.repeat(501) },
          direct: () => t.store.roles.create(cases[2]?.body as never, t.admin.id),
        },
        {
          path: '/api/v1/datasources',
          body: { name: '-bad', ds_type: 'oracle', config: [], pool_size: 0 },
          direct: () => t.store.datasources.create(cases[3]?.body as never, t.admin.id),
        },
        {
          path: '/api/v1/attribute-definitions',
          body: { key: '1st', entity_type: 'group', value_type: 'date' },
          direct: () => t.store.attributes.create(cases[4]?.body as never, t.admin.id),
        },
      ]
    for (const c of cases) {
      const viaHttp = await httpDetails(c.path, c.body)
      const direct = await storeDetails(c.direct)
      expect(viaHttp.length).toBeGreaterThan(1)
      expect(viaHttp).toEqual(direct)
    }
  })

  it('documents the store schema in OpenAPI: its limits and choices', async () => {
    const { status, body } = await t.json('GET', '/api/v1/openapi.json', { token: null })
    expect(status).toBe(200)
    const text = JSON.stringify(body)
    // policy_type's choices and the 50-target cap come from the store's policy schema.
    expect(text).toContain('"column_mask"')
    expect(text).toContain('"maxItems":50')
  })
})
