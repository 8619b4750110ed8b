import { beforeAll, describe, expect, it } from 'vitest'
import type { DecisionBinding } from '../policy/policy.types.js'
import { compileDecisionFunction } from './compile-decision-function.js'
import type { DecisionLogEntry } from './decision.types.js'
import { buildDecisionContext } from './decision-context.js'
import { resolveDecision } from './decision-outcome.js'
import { loadDecisionRuntime } from './load-runtime.js'

beforeAll(loadDecisionRuntime)

const ctx = buildDecisionContext({
  user: { id: 'u-1', username: 'ann', roles: ['analyst'], attributes: {} },
  datasource: { name: 'warehouse', accessMode: 'open' },
  attributeDefinitions: [],
  now: new Date('2024-03-09T10:00:00Z'),
  query: {
    tables: [{ datasource: 'warehouse', schema: 'public', table: 'orders' }],
    columns: ['id'],
    join_count: 0,
    has_aggregation: false,
    has_subquery: false,
    has_where: false,
    statement_type: 'SELECT',
  },
})

function binding(source: string | null, overrides: Partial<DecisionBinding> = {}): DecisionBinding {
  return {
    functionId: 'df-1',
    name: 'analysts-only',
    artifact: source === null ? null : compileDecisionFunction(source).artifact,
    config: {},
    evaluateContext: 'query',
    onError: 'deny',
    logLevel: 'off',
    isEnabled: true,
    ...overrides,
  }
}

function resolve(decision: DecisionBinding) {
  const entries: DecisionLogEntry[] = []
  const outcome = resolveDecision(decision, ctx, (entry) => entries.push(entry))
  return { outcome, entries }
}

const FIRES = 'function evaluate() { console.log("yes"); return { fire: true } }'
const SKIPS = 'function evaluate() { console.log("no"); return { fire: false } }'
const THROWS = 'function evaluate() { console.log("about to fail"); throw new Error("broken") }'

describe('resolveDecision', () => {
  it('fires a policy whose function is disabled without evaluating it', () => {
    const { outcome, entries } = resolve(binding(THROWS, { isEnabled: false }))
    expect(outcome).toEqual({ fire: true })
    expect(entries).toEqual([])
  })

  it('fires a policy whose compiled module is missing', () => {
    expect(resolve(binding(null)).outcome).toEqual({ fire: true })
  })

  it('follows the function: {fire: true} fires and {fire: false} skips', () => {
    expect(resolve(binding(FIRES)).outcome).toMatchObject({ fire: true })
    expect(resolve(binding(SKIPS)).outcome).toMatchObject({ fire: false })
    expect(resolve(binding(SKIPS)).outcome).not.toHaveProperty('error')
  })

  it('fires on error under on_error deny and skips under skip', () => {
    const deny = resolve(binding(THROWS, { onError: 'deny' })).outcome
    const skip = resolve(binding(THROWS, { onError: 'skip' })).outcome
    expect(deny).toMatchObject({ fire: true, error: 'evaluate() threw Error: broken (line 1)' })
    expect(skip).toMatchObject({ fire: false, error: 'evaluate() threw Error: broken (line 1)' })
  })

  it('applies on_error to an invalid result and to an exhausted fuel budget', () => {
    const invalid = binding('function evaluate() { return { fire: 1 } }', { onError: 'skip' })
    expect(resolve(invalid).outcome).toMatchObject({ fire: false })
    const loop = binding('function evaluate() { for (;;) {} }', { onError: 'deny' })
    expect(resolve(loop).outcome).toMatchObject({
      fire: true,
      error: expect.stringMatching(/limit/),
    })
  })

  it('applies on_error to a corrupt module', () => {
    const corrupt = { ...binding(FIRES), artifact: 'not a module' }
    expect(resolve({ ...corrupt, onError: 'skip' }).outcome).toMatchObject({
      fire: false,
      error: 'decision module is corrupt',
    })
  })

  it('reports every failure with the function name and id, whatever the log level', () => {
    const { entries } = resolve(binding(THROWS, { logLevel: 'off' }))
    expect(entries).toEqual([
      {
        level: 'error',
        functionId: 'df-1',
        functionName: 'analysts-only',
        message:
          'decision function failed, policy fires (on_error deny): evaluate() threw Error: broken (line 1)',
      },
    ])
  })

  it('reports console lines as info at log level info', () => {
    const { entries } = resolve(binding(FIRES, { logLevel: 'info' }))
    expect(entries).toEqual([
      { level: 'info', functionId: 'df-1', functionName: 'analysts-only', message: 'yes' },
    ])
  })

  it('reports console lines at log level error only beside a failure', () => {
    expect(resolve(binding(FIRES, { logLevel: 'error' })).entries).toEqual([])
    const failed = resolve(binding(THROWS, { logLevel: 'error' })).entries
    expect(failed.map((e) => [e.level, e.message.slice(0, 24)])).toEqual([
      ['error', 'decision function failed'],
      ['error', 'about to fail'],
    ])
  })

  it('hides query facts from a session-context function', () => {
    const source = 'function evaluate(ctx) { return { fire: ctx.query === undefined } }'
    expect(resolve(binding(source, { evaluateContext: 'session' })).outcome.fire).toBe(true)
    expect(resolve(binding(source, { evaluateContext: 'query' })).outcome.fire).toBe(false)
  })

  it('passes the binding config to evaluate', () => {
    const source = 'function evaluate(ctx, config) { return { fire: config.role === "analyst" } }'
    expect(resolve(binding(source, { config: { role: 'analyst' } })).outcome.fire).toBe(true)
    expect(resolve(binding(source, { config: { role: 'admin' } })).outcome.fire).toBe(false)
  })

  it('returns the evaluation for the audit', () => {
    const { outcome } = resolve(binding(FIRES, { logLevel: 'info' }))
    expect(outcome.evaluation).toMatchObject({ fire: true, error: null, logs: ['yes'] })
    expect(outcome.evaluation?.fuelConsumed).toBe(0)
  })
})
