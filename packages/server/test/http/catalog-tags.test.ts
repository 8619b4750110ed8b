import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { setup, type TestContext, unique } from './helpers.js'

let ctx: TestContext
let dsId: string
const column = (column_name: string, ordinal_position: number) => ({
  column_name,
  ordinal_position,
  data_type: 'text',
  is_nullable: true,
})

beforeAll(async () => {
  ctx = await setup()
  dsId = (
    await ctx.store.datasources.create(
      { name: unique('hr'), ds_type: 'pglite', config: {} },
      ctx.admin.id,
    )
  ).id
  await ctx.store.catalog.saveCatalog(
    dsId,
    [
      {
        schema_name: 'public',
        is_selected: true,
        tables: [
          {
            table_name: 'staff',
            is_selected: true,
            columns: [column('name', 1), column('salary', 2)],
          },
        ],
      },
    ],
    ctx.admin.id,
  )
})
afterAll(() => ctx.close())

describe('catalog tags in the admin API', () => {
  const base = () => `/api/v1/datasources/${dsId}/tags`
  const staff = { schema_name: 'public', table_name: 'staff' }

  it('adds, replaces and removes tags, and shows them in the catalog view', async () => {
    const added = await ctx.json('POST', base(), {
      body: { ...staff, column_name: 'salary', tags: ['finance.salary'] },
    })
    expect(added.body).toEqual({ ...staff, column_name: 'salary', tags: ['finance.salary'] })
    await ctx.json('POST', base(), { body: { ...staff, column_name: 'salary', tags: ['pii'] } })
    await ctx.json('PUT', base(), { body: { ...staff, tags: ['hr'] } })
    const catalog = await ctx.json('GET', `/api/v1/datasources/${dsId}/catalog`)
    const table = catalog.body.schemas[0].tables[0]
    expect(table.tags).toEqual(['hr'])
    expect(
      table.columns.find((c: { column_name: string }) => c.column_name === 'salary').tags,
    ).toEqual(['finance.salary', 'pii'])
    expect(
      table.columns.find((c: { column_name: string }) => c.column_name === 'name'),
    ).not.toHaveProperty('tags')
    const removed = await ctx.call(
      'DELETE',
      `${base()}?schema_name=public&table_name=staff&column_name=salary&tag=pii`,
    )
    expect(removed.status).toBe(204)
    expect((await ctx.json('GET', base())).body).toEqual([
      { ...staff, column_name: null, tags: ['hr'] },
      { ...staff, column_name: 'salary', tags: ['finance.salary'] },
    ])
    const again = await ctx.call(
      'DELETE',
      `${base()}?schema_name=public&table_name=staff&column_name=salary&tag=pii`,
    )
    expect(again.status).toBe(404)
    const audit = await ctx.json(
      'GET',
      '/api/v1/audit/admin?resource_type=catalog_tag&action=update',
    )
    expect(audit.body.total).toBe(4)
  })

  it('refuses bad tags and unknown objects, changing nothing', async () => {
    const bad = await ctx.json('PUT', base(), { body: { ...staff, tags: ['Finance Salary'] } })
    expect([bad.status, bad.body.error.details[0].field]).toEqual([422, 'tags[0]'])
    const missing = await ctx.json('PUT', base(), {
      body: { ...staff, column_name: 'bonus', tags: ['finance'] },
    })
    expect(missing.status).toBe(404)
    expect((await ctx.json('GET', `${base()}?tag=hr`)).body).toEqual([
      { ...staff, column_name: null, tags: ['hr'] },
    ])
  })
})
