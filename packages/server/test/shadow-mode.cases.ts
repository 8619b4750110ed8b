import type { Policy } from '@palisade/store'
import type pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Harness, MakeHarness } from './fixtures/harness.js'

/** Shadow mode (docs/policies.md, "Shadow mode") through the data plane. */
export function runShadowModeCases(name: string, makeHarness: MakeHarness): void {
  describe(`shadow policies, over ${name}`, () => {
    let h: Harness
    let filter: Policy
    let hide: Policy
    beforeAll(async () => {
      h = await makeHarness()
      const { store, shop } = h
      const a = shop.admin.id
      filter = await store.policies.create(
        {
          name: 'shadow-acme-orders',
          policy_type: 'row_filter',
          targets: [{ schemas: ['public'], tables: ['orders'] }],
          filter_expression: "tenant = 'acme'",
          enforcement: 'shadow',
        },
        a,
      )
      hide = await store.policies.create(
        {
          name: 'shadow-hide-secrets',
          policy_type: 'table_deny',
          targets: [{ schemas: ['public'], tables: ['secrets'] }],
          enforcement: 'shadow',
        },
        a,
      )
      for (const policy of [filter, hide]) {
        await store.assignments.assign(
          shop.datasourceId,
          { policy_id: policy.id, scope: 'user', user_id: shop.carol.id },
          a,
        )
      }
    })
    afterAll(() => h?.close())

    /** The newest audit row of a statement. */
    async function auditOf(sql: string) {
      const row = (await h.auditRows()).find((r) => r.original_query === sql)
      if (!row) throw new Error(`no audit row for ${sql}`)
      return row
    }

    it('evaluates a shadow policy for every statement and never applies it', async () => {
      const carol = await h.connect('carol')
      const orders = await carol.query('SELECT id FROM orders ORDER BY id')
      expect(orders.rows.map((r) => r.id)).toEqual([10, 11, 12, 13])
      const secrets = await carol.query('SELECT value FROM secrets')
      expect(secrets.rows).toEqual([{ value: 'the recipe' }])

      const filtered = await auditOf('SELECT id FROM orders ORDER BY id')
      expect(filtered.status).toBe('success')
      expect(JSON.parse(filtered.policies_applied)).toEqual([])
      expect(JSON.parse(filtered.shadow_policies ?? 'null')).toEqual([
        { policy_id: filter.id, version: filter.version, name: filter.name, decision: null },
      ])
      expect(filtered.shadow_denied).toBe(false)

      const refused = await auditOf('SELECT value FROM secrets')
      expect(refused.status).toBe('success')
      expect(JSON.parse(refused.shadow_policies ?? '[]').map((p: Policy) => p.name)).toEqual([
        'shadow-hide-secrets',
      ])
      expect(refused.shadow_denied).toBe(true)

      // A statement no shadow policy targets: an empty list, not refused.
      await carol.query('SELECT id FROM customers')
      const untouched = await auditOf('SELECT id FROM customers')
      expect(JSON.parse(untouched.shadow_policies ?? 'null')).toEqual([])
      expect(untouched.shadow_denied).toBe(false)
    })

    it('records nothing for sessions without shadow policies', async () => {
      const alice = await h.connect('alice')
      await alice.query('SELECT id FROM orders WHERE id > 0')
      const row = await auditOf('SELECT id FROM orders WHERE id > 0')
      expect(row.shadow_policies).toBeNull()
      expect(row.shadow_denied).toBeNull()
    })

    it('summarizes a shadow policy over a window: statements, users, refusals, examples', async () => {
      await h.store.audit.queries.flush()
      const report = await h.store.audit.queries.shadowReport(hide.id)
      expect(report).toMatchObject({ policy_id: hide.id, statements: 1, would_deny: 1 })
      expect(report.users).toEqual([
        { user_id: h.shop.carol.id, username: 'carol', statements: 1, would_deny: 1 },
      ])
      expect(report.examples.map((e) => [e.original_query, e.would_deny])).toEqual([
        ['SELECT value FROM secrets', true],
      ])
      const rows = await h.store.audit.queries.shadowReport(filter.id)
      expect(rows).toMatchObject({ statements: 1, would_deny: 0 })
      const later = await h.store.audit.queries.shadowReport(filter.id, {
        from: new Date(Date.now() + 60_000),
      })
      expect(later).toMatchObject({ statements: 0, users: [], examples: [] })
    })

    it('takes effect in open sessions, at their next statement, when switched to enforce', async () => {
      const carol: pg.Client = await h.connect('carol')
      expect((await carol.query('SELECT count(*)::int AS n FROM orders')).rows).toEqual([{ n: 4 }])
      await h.store.policies.update(
        filter.id,
        { version: filter.version, enforcement: 'enforce' },
        h.shop.admin.id,
      )
      await expect
        .poll(async () => (await carol.query('SELECT count(*)::int AS n FROM orders')).rows[0].n)
        .toBe(2)
      await h.store.policies.update(
        filter.id,
        { version: filter.version + 1, enforcement: 'shadow' },
        h.shop.admin.id,
      )
      await expect
        .poll(async () => (await carol.query('SELECT count(*)::int AS n FROM orders')).rows[0].n)
        .toBe(4)
    })
  })
}
