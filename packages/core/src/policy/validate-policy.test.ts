import { beforeAll, describe, expect, it } from 'vitest'
import { loadParser } from '../ast/parse.js'
import { validateExpression, validatePolicy } from './validate-policy.js'

beforeAll(() => loadParser())

const everything = [{ schemas: ['public'], tables: ['orders'] }]
const withColumns = [{ schemas: ['public'], tables: ['orders'], columns: ['email'] }]

describe('validatePolicy: shape by type (docs/resources.md#policies)', () => {
  it.each([
    [
      'row_filter without filter_expression',
      { policyType: 'row_filter', targets: everything },
      'filter_expression',
      'required',
    ],
    [
      'row_filter with columns',
      { policyType: 'row_filter', targets: withColumns, filterExpression: 'a = 1' },
      'targets[0].columns',
      'not_allowed',
    ],
    [
      'column_mask without mask_expression',
      { policyType: 'column_mask', targets: withColumns },
      'mask_expression',
      'required',
    ],
    [
      'column_mask without columns',
      { policyType: 'column_mask', targets: everything, maskExpression: "'x'" },
      'targets[0].columns',
      'required',
    ],
    [
      'column_allow with empty columns',
      { policyType: 'column_allow', targets: [{ schemas: ['*'], tables: ['*'], columns: [] }] },
      'targets[0].columns',
      'required',
    ],
    [
      'column_deny with a filter',
      { policyType: 'column_deny', targets: withColumns, filterExpression: 'a = 1' },
      'filter_expression',
      'not_allowed',
    ],
    [
      'table_deny with columns, even empty',
      { policyType: 'table_deny', targets: [{ schemas: ['*'], tables: ['*'], columns: [] }] },
      'targets[0].columns',
      'not_allowed',
    ],
    ['no targets', { policyType: 'table_deny', targets: [] }, 'targets', 'too_short'],
    [
      'aggregation without min_group_size',
      { policyType: 'aggregation', targets: everything },
      'min_group_size',
      'required',
    ],
    [
      'aggregation with columns',
      { policyType: 'aggregation', targets: withColumns, minGroupSize: 5 },
      'targets[0].columns',
      'not_allowed',
    ],
    [
      'aggregation with min_group_size 1',
      { policyType: 'aggregation', targets: everything, minGroupSize: 1 },
      'min_group_size',
      'out_of_range',
    ],
    [
      'aggregation with min_group_size above 1,000,000',
      { policyType: 'aggregation', targets: everything, minGroupSize: 1_000_001 },
      'min_group_size',
      'out_of_range',
    ],
    [
      'aggregation with a fractional min_group_size',
      { policyType: 'aggregation', targets: everything, minGroupSize: 2.5 },
      'min_group_size',
      'out_of_range',
    ],
    [
      'aggregation with a filter',
      { policyType: 'aggregation', targets: everything, minGroupSize: 5, filterExpression: 'a' },
      'filter_expression',
      'not_allowed',
    ],
    [
      'aggregation allowing an unknown aggregate',
      {
        policyType: 'aggregation',
        targets: everything,
        minGroupSize: 5,
        allowedAggregates: ['max', 'median'],
      },
      'allowed_aggregates[1]',
      'invalid_enum',
    ],
    [
      'aggregation allowing an upper-case name',
      {
        policyType: 'aggregation',
        targets: everything,
        minGroupSize: 5,
        allowedAggregates: ['MIN'],
      },
      'allowed_aggregates[0]',
      'invalid_enum',
    ],
    [
      'aggregation allowing a statistic aggregate',
      {
        policyType: 'aggregation',
        targets: everything,
        minGroupSize: 5,
        allowedAggregates: ['count'],
      },
      'allowed_aggregates[0]',
      'invalid_enum',
    ],
    [
      'aggregation allowing one aggregate twice',
      {
        policyType: 'aggregation',
        targets: everything,
        minGroupSize: 5,
        allowedAggregates: ['min', 'min'],
      },
      'allowed_aggregates[1]',
      'duplicate',
    ],
    [
      'aggregation allowing more than 40 aggregates',
      {
        policyType: 'aggregation',
        targets: everything,
        minGroupSize: 5,
        allowedAggregates: Array.from({ length: 41 }, () => 'min'),
      },
      'allowed_aggregates',
      'too_long',
    ],
    [
      'projection without columns',
      { policyType: 'projection', targets: everything },
      'targets[0].columns',
      'required',
    ],
    [
      'projection with a mask',
      { policyType: 'projection', targets: withColumns, maskExpression: "'x'" },
      'mask_expression',
      'not_allowed',
    ],
    [
      'projection with min_group_size',
      { policyType: 'projection', targets: withColumns, minGroupSize: 5 },
      'min_group_size',
      'not_allowed',
    ],
    [
      'row_filter with allowed_aggregates',
      {
        policyType: 'row_filter',
        targets: everything,
        filterExpression: 'a = 1',
        allowedAggregates: ['min'],
      },
      'allowed_aggregates',
      'not_allowed',
    ],
  ] as const)('rejects %s', (_name, input, field, code) => {
    const result = validatePolicy(input)
    expect(result).toMatchObject({ ok: false, error: 'validation_failed' })
    expect(result.ok ? [] : result.details).toContainEqual(expect.objectContaining({ field, code }))
  })

  it('accepts each type in its valid shape', () => {
    expect(
      validatePolicy({
        policyType: 'row_filter',
        targets: everything,
        filterExpression: 'tenant_id = {user.tenant}',
      }),
    ).toEqual({ ok: true })
    expect(
      validatePolicy({
        policyType: 'column_mask',
        targets: withColumns,
        maskExpression: "'***' || right(email, 4)",
      }),
    ).toEqual({ ok: true })
    expect(validatePolicy({ policyType: 'column_allow', targets: withColumns })).toEqual({
      ok: true,
    })
    expect(validatePolicy({ policyType: 'column_deny', targets: withColumns })).toEqual({
      ok: true,
    })
    expect(validatePolicy({ policyType: 'table_deny', targets: everything })).toEqual({ ok: true })
    expect(
      validatePolicy({
        policyType: 'aggregation',
        targets: everything,
        minGroupSize: 2,
        allowedAggregates: ['min', 'max', 'array_agg'],
      }),
    ).toEqual({ ok: true })
    expect(
      validatePolicy({ policyType: 'aggregation', targets: everything, minGroupSize: 1_000_000 }),
    ).toEqual({ ok: true })
    expect(validatePolicy({ policyType: 'projection', targets: withColumns })).toEqual({ ok: true })
  })

  it('names the refused aggregate in the message', () => {
    const result = validatePolicy({
      policyType: 'aggregation',
      targets: everything,
      minGroupSize: 5,
      allowedAggregates: ['median', 'sum'],
    })
    expect(result.ok ? [] : result.details.map((d) => d.message)).toEqual([
      expect.stringContaining('median'),
      expect.stringContaining('sum'),
    ])
  })

  it('takes tag targets without columns for projection and aggregation', () => {
    const tagged = [{ tags: ['pii'] } as never]
    expect(validatePolicy({ policyType: 'projection', targets: tagged })).toEqual({ ok: true })
    expect(
      validatePolicy({ policyType: 'aggregation', targets: tagged, minGroupSize: 10 }),
    ).toEqual({ ok: true })
  })

  it('reports a malformed expression as invalid_expression with the parser message', () => {
    const result = validatePolicy({
      policyType: 'row_filter',
      targets: everything,
      filterExpression: 'tenant_id = = 1',
    })
    expect(result).toMatchObject({ ok: false, error: 'invalid_expression' })
    expect(result.ok ? '' : result.details[0]?.message).toMatch(/syntax error/)
  })
})

describe('validateExpression (docs/policies.md#expressions)', () => {
  it.each([
    'tenant_id = {user.tenant}',
    "CASE WHEN status = 'paid' THEN true ELSE false END",
    "coalesce(region, 'none') IN ('north', 'south')",
    "lower(email) LIKE '%@acme.test' AND amount BETWEEN 1 AND 100",
    'tenant_id IN ({user.tenants}) OR {user.vip}',
    "created_at >= date_trunc('month', now()) - interval '1 month'",
    "nullif(note, '') IS NOT NULL",
    "name = '{user.tenant}'",
  ])('accepts %s', (expression) => {
    expect(validateExpression(expression)).toMatchObject({ valid: true })
  })

  it.each([
    ['a subquery', 'tenant_id IN (SELECT id FROM tenants)'],
    ['a correlated subquery', 'EXISTS (SELECT 1 FROM t WHERE t.id = tenant_id)'],
    ['EXTRACT', 'EXTRACT(year FROM created_at) = 2026'],
    ['SUBSTRING FROM FOR', "SUBSTRING(name FROM 1 FOR 2) = 'Al'"],
    ['SIMILAR TO', "name SIMILAR TO 'A%'"],
    ['an aggregate', 'count(*) > 1'],
    ['a window function', 'row_number() OVER () = 1'],
    ['a set-returning function', 'generate_series(1, 2) = 1'],
    ['a parameter', 'tenant_id = $1'],
    ['a qualified column', 'orders.tenant_id = 1'],
    ['a function off the allowlist', "pg_read_file('/etc/passwd') IS NOT NULL"],
    ['SQL execution', "query_to_xml('select 1', true, true, '') IS NOT NULL"],
    ['a settings change', "set_config('a.b', 'c', false) = 'c'"],
    ['a regclass cast', "'orders'::regclass IS NOT NULL"],
    ['two statements', 'true; DROP TABLE orders'],
    ['an ORDER BY tail', 'true ORDER BY 1'],
    ['an empty expression', '   '],
    ['a broken template', 'tenant_id = {user.}'],
  ])('rejects %s', (_name, expression) => {
    expect(validateExpression(expression)).toMatchObject({ valid: false })
  })

  it('lists the template variables used', () => {
    expect(
      validateExpression(
        'tenant_id = {user.tenant} AND region = {user.region} AND {user.tenant} > 0',
      ),
    ).toEqual({
      valid: true,
      masks: [],
      variables: ['tenant', 'region'],
    })
  })
})
