import { describe, expect, it, vi } from 'vitest'

describe('loadParser', () => {
  it('is enough to validate policies and expressions, and starts no decision worker', async () => {
    // A module graph of its own: the parser and the decision workers are per-graph state.
    vi.resetModules()
    const core = await import('./index.js')
    await core.loadParser()
    const valid = core.validatePolicy({
      policyType: 'row_filter',
      targets: [{ schemas: ['public'], tables: ['orders'] }],
      filterExpression: 'tenant = {user.tenant}',
      maskExpression: null,
    })
    expect(valid.ok).toBe(true)
    const broken = core.validatePolicy({
      policyType: 'row_filter',
      targets: [{ schemas: ['public'], tables: ['orders'] }],
      filterExpression: 'tenant = = 1',
      maskExpression: null,
    })
    expect(broken.ok).toBe(false)
    expect(core.validateExpression("'***'", { isMask: true }).valid).toBe(true)
    expect(core.validateExpression('(SELECT 1)', { isMask: false }).valid).toBe(false)
    expect(() => core.compileDecisionFunction('function evaluate() {}')).toThrow(
      'decision runtime is not loaded',
    )
  })
})
