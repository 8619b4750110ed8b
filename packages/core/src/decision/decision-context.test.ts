import { describe, expect, it } from 'vitest'
import type { AttributeDefinition, SessionUser } from '../session-context.types.js'
import { buildDecisionContext } from './decision-context.js'

const user: SessionUser = {
  id: '6f1c1f8e-0000-4000-8000-000000000001',
  username: 'ann',
  roles: ['analyst', 'staff'],
  attributes: { tenant: 'acme', level: 4 },
}
const datasource = { name: 'warehouse', accessMode: 'policy_required' as const }
const now = new Date('2024-03-09T23:30:05.123Z')

function build(definitions: AttributeDefinition[], attributes = user.attributes) {
  return buildDecisionContext({
    user: { ...user, attributes },
    datasource,
    attributeDefinitions: definitions,
    now,
  })
}

describe('buildDecisionContext', () => {
  it('builds exactly the session shape of docs/decision-functions.md#the-context-ctx', () => {
    const ctx = build([
      { key: 'tenant', valueType: 'string', defaultValue: null },
      { key: 'level', valueType: 'integer', defaultValue: null },
    ])
    expect(ctx).toEqual({
      session: {
        user: {
          id: user.id,
          username: 'ann',
          roles: ['analyst', 'staff'],
          tenant: 'acme',
          level: 4,
        },
        time: { now: '2024-03-09T23:30:05.123Z', hour: 23, day_of_week: 'Saturday' },
        datasource: { name: 'warehouse', access_mode: 'policy_required' },
      },
    })
  })

  it('gives a missing attribute its typed default, or null when the default is null', () => {
    const ctx = build(
      [
        { key: 'clearance', valueType: 'integer', defaultValue: '3' },
        { key: 'contractor', valueType: 'boolean', defaultValue: 'false' },
        { key: 'regions', valueType: 'list', defaultValue: '["eu","us"]' },
        { key: 'team', valueType: 'string', defaultValue: null },
      ],
      {},
    )
    const { clearance, contractor, regions, team } = ctx.session.user
    expect([clearance, contractor, regions, team]).toEqual([3, false, ['eu', 'us'], null])
  })

  it('never uses the default for an attribute the user has', () => {
    const ctx = build([{ key: 'tenant', valueType: 'string', defaultValue: 'fallback' }])
    expect(ctx.session.user['tenant']).toBe('acme')
  })

  it('lets the built-ins win over custom attributes with the same name', () => {
    const ctx = build(
      [
        { key: 'id', valueType: 'string', defaultValue: 'spoofed' },
        { key: 'username', valueType: 'string', defaultValue: 'root' },
        { key: 'roles', valueType: 'list', defaultValue: ['admin'] },
        { key: 'user_id', valueType: 'string', defaultValue: 'spoofed' },
      ],
      { id: 'spoofed', username: 'root', roles: ['admin'], user_id: 'spoofed' },
    )
    expect(ctx.session.user).toEqual({ id: user.id, username: 'ann', roles: ['analyst', 'staff'] })
  })

  it('exposes only defined attributes, never other user fields', () => {
    const ctx = build([], { is_admin: true, password_hash: 'x', tenant: 'acme' })
    expect(Object.keys(ctx.session.user)).toEqual(['id', 'username', 'roles'])
  })

  it('turns a value that does not fit its type into null', () => {
    const ctx = build([{ key: 'level', valueType: 'integer', defaultValue: null }], {
      level: 'four',
    })
    expect(ctx.session.user['level']).toBeNull()
  })

  it('keeps an attribute named __proto__ an ordinary own key', () => {
    const ctx = build([{ key: '__proto__', valueType: 'string', defaultValue: 'x' }], {})
    expect(Object.getPrototypeOf(ctx.session.user)).toBe(Object.prototype)
    expect(JSON.parse(JSON.stringify(ctx.session.user))).toHaveProperty(['__proto__'], 'x')
  })

  it('reports the evaluation time in UTC with a full English day name', () => {
    const ctx = buildDecisionContext({
      user,
      datasource,
      attributeDefinitions: [],
      now: new Date('2024-03-10T00:15:00+02:00'),
    })
    expect(ctx.session.time).toEqual({
      now: '2024-03-09T22:15:00.000Z',
      hour: 22,
      day_of_week: 'Saturday',
    })
  })

  it('adds query facts only when they are given, with tables as objects', () => {
    const query = {
      tables: [{ datasource: 'warehouse', schema: 'public', table: 'orders' }],
      columns: ['id', 'amount'],
      join_count: 0,
      has_aggregation: false,
      has_subquery: false,
      has_where: true,
      statement_type: 'SELECT',
    }
    expect(build([])).not.toHaveProperty('query')
    const ctx = buildDecisionContext({ user, datasource, attributeDefinitions: [], now, query })
    expect(ctx.query).toEqual(query)
    expect(ctx.query).not.toBe(query)
  })
})
