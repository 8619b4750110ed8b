import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Harness, MakeHarness } from './fixtures/harness.js'

const failure = (p: Promise<unknown>) =>
  p.then(
    () => null,
    (e: { code?: string }) => ({ code: e.code }),
  )

/**
 * Tag-targeted policies (docs/policies.md, "Tags") through the data plane: they follow the tags,
 * in open sessions too, from the statement after a tag changes.
 */
export function runTagCases(name: string, makeHarness: MakeHarness): void {
  describe(`tag-targeted policies, over ${name}`, () => {
    let h: Harness
    const tag = (table: string, column: string | null, tags: string[]) =>
      h.store.catalogTags.set(
        h.shop.datasourceId,
        { schema_name: 'public', table_name: table, column_name: column, tags },
        h.shop.admin.id,
      )
    const assignToCarol = async (policy: { id: string }) =>
      h.store.assignments.assign(
        h.shop.datasourceId,
        { policy_id: policy.id, user_id: h.shop.carol.id },
        h.shop.admin.id,
      )

    beforeAll(async () => {
      h = await makeHarness()
    })
    afterAll(() => h?.close())

    it('masks what carries a tag below the policy’s, from the next statement of an open session', async () => {
      const mask = await h.store.policies.create(
        {
          name: 'mask-pii',
          policy_type: 'column_mask',
          targets: [{ tags: ['pii'] } as never],
          mask_expression: "'***'",
        },
        h.shop.admin.id,
      )
      await assignToCarol(mask)
      const carol = await h.connect('carol')
      const read = async () =>
        (await carol.query('SELECT name, email FROM customers WHERE id = 1')).rows[0]
      expect(await read()).toEqual({ name: 'Ann', email: 'ann@acme.test' })
      await tag('customers', 'email', ['pii.email'])
      expect(await read()).toEqual({ name: 'Ann', email: '***' })
      await tag('customers', 'name', ['pii.name'])
      expect(await read()).toEqual({ name: '***', email: '***' })
      // Removing one tag lifts exactly what it brought.
      await tag('customers', 'email', [])
      expect(await read()).toEqual({ name: '***', email: 'ann@acme.test' })
      // Predicates see the masked value, as for any mask.
      const filtered = await carol.query(
        "SELECT count(*)::int AS n FROM customers WHERE name = 'Ann'",
      )
      expect(filtered.rows).toEqual([{ n: 0 }])
      await tag('customers', 'name', [])
    })

    it('hides a table by its tag and gives it back when the tag goes', async () => {
      const hide = await h.store.policies.create(
        {
          name: 'hide-restricted',
          policy_type: 'table_deny',
          targets: [{ tags: ['restricted'] } as never],
        },
        h.shop.admin.id,
      )
      await assignToCarol(hide)
      const carol = await h.connect('carol')
      expect((await carol.query('SELECT value FROM secrets')).rows).toEqual([
        { value: 'the recipe' },
      ])
      await tag('secrets', null, ['restricted.legal'])
      expect(await failure(carol.query('SELECT value FROM secrets'))).toEqual({ code: '42P01' })
      // The catalog views follow: a hidden table is not listed either.
      const listed = await carol.query(
        "SELECT count(*)::int AS n FROM pg_catalog.pg_tables WHERE tablename = 'secrets'",
      )
      expect(listed.rows).toEqual([{ n: 0 }])
      await tag('secrets', null, [])
      expect((await carol.query('SELECT value FROM secrets')).rows).toEqual([
        { value: 'the recipe' },
      ])
    })

    it('combines with name-targeted policies by the usual rules: deny wins over a tag mask', async () => {
      const a = h.shop.admin.id
      const mask = await h.store.policies.create(
        {
          name: 'mask-ssn-tag',
          policy_type: 'column_mask',
          targets: [{ tags: ['legal.ssn'] } as never],
          mask_expression: "'xxx'",
        },
        a,
      )
      await assignToCarol(mask)
      await tag('customers', 'ssn', ['legal.ssn'])
      const carol = await h.connect('carol')
      expect((await carol.query('SELECT ssn FROM customers WHERE id = 2')).rows).toEqual([
        { ssn: 'xxx' },
      ])
      const deny = await h.store.policies.create(
        {
          name: 'deny-ssn-name',
          policy_type: 'column_deny',
          targets: [{ schemas: ['public'], tables: ['customers'], columns: ['ssn'] }],
        },
        a,
      )
      await assignToCarol(deny)
      expect(await failure(carol.query('SELECT ssn FROM customers WHERE id = 2'))).toEqual({
        code: '42501',
      })
    })
  })
}
