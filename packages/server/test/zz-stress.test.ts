import { it, expect } from 'vitest'
import { pgliteHarness } from './fixtures/harness.js'

it('stress', async () => {
  const h = await pgliteHarness()
  const clients = await Promise.all(Array.from({ length: 8 }, () => h.connect('alice', { application_name: 'stress-é' })))
  let stop = false
  const updater = (async () => {
    let pol = h.shop.policies.orders
    while (!stop) {
      pol = await h.store.policies.update(pol.id, { version: pol.version, filter_expression: 'tenant = {user.tenant}' }, h.shop.admin.id)
      await h.store.access.setUsers(h.shop.datasourceId, { user_ids: [h.shop.alice.id, h.shop.carol.id] }, h.shop.admin.id)
    }
  })()
  await Promise.all(clients.map(async (c, i) => {
    for (let j = 0; j < 30; j++) {
      await c.query(`SELECT id, 'ü${i}-${j}' AS x FROM orders WHERE id > $1`, [j])
      await c.query(`SELECT '😀' AS e, ${j} AS n`)
      if (j % 10 === 0) await h.store.audit.queries.flush()
      if (j % 7 === 0) await h.store.buildSessionInput('alice', 'shop')
    }
  }))
  stop = true
  await updater
  await h.store.audit.queries.flush()
  console.log('stats', JSON.stringify(h.store.audit.queries.writer.stats))
  const page = await h.store.audit.queries.list({ page_size: 5 })
  console.log('total', page.total)
  expect(h.store.audit.queries.writer.stats.failed).toBe(0)
  await h.close()
})
