/**
 * Sessions over a wide catalog: compiling does no work per exposed table (each table's rules are
 * built when a statement first names it, over an index shared by every session of the catalog),
 * and what is built lazily is what an eager build gave: the same filter, mask, hidden tables and
 * views, whichever table is named first.
 */
import { beforeAll, describe, expect, it } from 'vitest'
import type { Catalog } from '../catalog.types.js'
import { loadCore } from '../load-core.js'
import type { EffectivePolicy } from '../policy/policy.types.js'
import { rewrite } from '../rewrite.js'
import type { SessionInput } from '../session-context.types.js'
import { CatalogIndex } from './catalog-index.js'
import { compileSession } from './compile-session.js'
import type { CompiledSession } from './compiled-session.js'

const TABLES = 10_000
const nameOf = (i: number) => `t${String(i).padStart(5, '0')}`

function wideCatalog(): Catalog {
  const columns = ['id', 'tenant_id', 'c2', 'c3'].map((name, i) => ({
    name,
    type: i < 2 ? 'integer' : 'text',
  }))
  const tables = Array.from({ length: TABLES }, (_, i) => ({ name: nameOf(i + 1), columns }))
  return {
    schemas: [
      {
        name: 'wide',
        tables: [
          ...tables,
          {
            name: 'v_recent',
            kind: 'VIEW' as const,
            definition: `SELECT id, tenant_id, c2 FROM wide.${nameOf(7)} WHERE id > 10`,
            columns: columns.slice(0, 3),
          },
        ],
      },
    ],
  }
}

const policy = (fields: Partial<EffectivePolicy> & Pick<EffectivePolicy, 'id' | 'type'>) =>
  ({
    name: fields.id,
    version: 1,
    priority: 100,
    targets: [{ schemas: ['wide'], tables: ['*'] }],
    ...fields,
  }) as EffectivePolicy

const POLICIES: EffectivePolicy[] = [
  policy({ id: 'rows', type: 'row_filter', filterExpression: 'tenant_id = {user.tenant}' }),
  policy({
    id: 'mask',
    type: 'column_mask',
    targets: [{ schemas: ['wide'], tables: ['*'], columns: ['c2'] }],
    maskExpression: "'***'",
  }),
  policy({
    id: 'hide',
    type: 'table_deny',
    targets: [{ schemas: ['wide'], tables: [nameOf(13)] }],
  }),
]

function input(catalog: Catalog, tenant: number): SessionInput {
  return {
    user: { id: `u${tenant}`, username: `u${tenant}`, roles: [], attributes: { tenant } },
    datasource: { name: 'wide', accessMode: 'open' },
    catalog,
    attributeDefinitions: [{ key: 'tenant', valueType: 'integer', defaultValue: null }],
    policies: POLICIES,
  }
}

const built = (session: CompiledSession) =>
  [...(session.schemas.get('wide')?.tables.built() ?? [])].map((e) => e.exposed.name)

beforeAll(async () => {
  await loadCore()
})

describe('a session over 10,000 tables', () => {
  const catalog = wideCatalog()

  it('builds no table at login and only the tables a statement names', async () => {
    const session = await compileSession(input(catalog, 3))
    expect(built(session)).toEqual([])
    expect(session.schemas.get('wide')?.tables.size).toBe(TABLES + 1)
    const pick = nameOf(1 + Math.floor(Math.random() * TABLES))
    const [statement] = rewrite(`SELECT * FROM ${pick} WHERE id = 1`, session).statements
    expect(built(session)).toEqual([pick])
    expect(statement?.sql).toContain('tenant_id = 3')
    expect(statement?.sql).toContain(`'***' AS c2`)
    expect(statement?.policiesApplied.map((p) => p.policy_id).sort()).toEqual(['mask', 'rows'])
  })

  it('shares one index per catalog between sessions, and keeps each user’s values apart', async () => {
    const [a, b] = [
      await compileSession(input(catalog, 1)),
      await compileSession(input(catalog, 2)),
    ]
    expect(CatalogIndex.of(catalog)).toBe(CatalogIndex.of(catalog))
    const sqlOf = (s: CompiledSession) =>
      rewrite(`SELECT id FROM wide.${nameOf(42)}`, s).statements[0]?.sql
    expect(sqlOf(a)).toContain('tenant_id = 1')
    expect(sqlOf(b)).toContain('tenant_id = 2')
  })

  it('still hides a denied table and resolves a view through the user’s policies', async () => {
    const session = await compileSession(input(catalog, 5))
    expect(() => rewrite(`SELECT * FROM ${nameOf(13)}`, session)).toThrow(
      `relation "${nameOf(13)}" does not exist`,
    )
    const [view] = rewrite('SELECT * FROM v_recent', session).statements
    expect(view?.sql).toContain(`wide.${nameOf(7)}`)
    expect(view?.sql).toContain('tenant_id = 5')
    expect(built(session).sort()).toEqual([nameOf(13), nameOf(7), 'v_recent'].sort())
  })

  it('lists every visible table in the catalog views, the denied one left out', async () => {
    const session = await compileSession(input(catalog, 5))
    const visible = [...session.visibleTables()].map((plan) => plan.table.name)
    expect(visible).toHaveLength(TABLES)
    expect(visible).not.toContain(nameOf(13))
  })
})
