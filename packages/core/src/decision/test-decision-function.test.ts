import { describe, expect, it } from 'vitest'
import { testDecisionFunction } from './test-decision-function.js'

const session = { user: { id: 'u-1', username: 'ann', roles: ['analyst'] } }

describe('testDecisionFunction', () => {
  it('answers a success with fire, fuel, time and logs', async () => {
    const answer = await testDecisionFunction({
      decisionFn: `function evaluate(ctx) {
        console.log('evaluate() called')
        return { fire: ctx.session.user.roles.includes('analyst') }
      }`,
      testContext: { session },
    })
    expect(answer).toEqual({
      success: true,
      result: {
        fire: true,
        fuel_consumed: 0,
        time_us: expect.any(Number),
        logs: ['evaluate() called'],
      },
    })
  })

  it('answers a compile error without a result', async () => {
    const answer = await testDecisionFunction({ decisionFn: 'function (', testContext: {} })
    expect(answer.success).toBe(false)
    expect(answer.error).toMatch(/^syntax error at line 1/)
    expect(answer).not.toHaveProperty('result')
  })

  it('answers an evaluation failure with the error and a result without fire', async () => {
    const answer = await testDecisionFunction({
      decisionFn: 'function evaluate() { console.log("checking"); return { fire: "yes" } }',
      testContext: { session },
    })
    expect(answer).toEqual({
      success: false,
      error: 'invalid result: fire must be a boolean',
      result: { fuel_consumed: 0, time_us: expect.any(Number), logs: ['checking'] },
    })
  })

  it('reports fuel exhaustion against the 1,000,000 limit', async () => {
    const answer = await testDecisionFunction({
      decisionFn: 'function evaluate() { while (true) {} }',
      testContext: {},
    })
    expect(answer.success).toBe(false)
    expect(answer.error).toMatch(/limit/)
  })

  it('keeps query facts only for a query-context test', async () => {
    const decisionFn = 'function evaluate(ctx) { return { fire: ctx.query !== undefined } }'
    const testContext = { session, query: { tables: [], columns: [] } }
    const implied = await testDecisionFunction({ decisionFn, testContext })
    const asSession = await testDecisionFunction({
      decisionFn,
      testContext,
      evaluateContext: 'session',
    })
    expect(implied.result?.fire).toBe(true)
    expect(asSession.result?.fire).toBe(false)
  })

  it('passes the test context as given and the config, defaulting to {}', async () => {
    const decisionFn = `function evaluate(ctx, config) {
      return { fire: ctx.anything === 1 && JSON.stringify(config) === (ctx.expect || '{}') }
    }`
    expect(
      (await testDecisionFunction({ decisionFn, testContext: { anything: 1 } })).result?.fire,
    ).toBe(true)
    const withConfig = await testDecisionFunction({
      decisionFn,
      decisionConfig: { a: 1 },
      testContext: { anything: 1, expect: '{"a":1}' },
    })
    expect(withConfig.result?.fire).toBe(true)
  })
})
