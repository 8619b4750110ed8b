import { beforeAll, describe, expect, it } from 'vitest'
import { compileDecisionFunction } from './compile-decision-function.js'
import { buildDecisionContext } from './decision-context.js'
import { evaluateDecision } from './evaluate-decision.js'
import { loadDecisionRuntime } from './load-runtime.js'

beforeAll(loadDecisionRuntime)

const ctx = buildDecisionContext({
  user: { id: 'u-1', username: 'ann', roles: ['analyst'], attributes: { tenant: 'acme' } },
  datasource: { name: 'warehouse', accessMode: 'open' },
  attributeDefinitions: [{ key: 'tenant', valueType: 'string', defaultValue: null }],
  now: new Date('2024-03-09T10:00:00Z'),
})

function run(source: string, config: unknown = {}, logLevel?: 'off' | 'error' | 'info') {
  const { artifact } = compileDecisionFunction(source)
  return evaluateDecision(artifact, ctx, config, logLevel ? { logLevel } : {})
}

function returning(expression: string) {
  return run(`function evaluate(ctx, config) { return ${expression} }`)
}

describe('evaluateDecision', () => {
  it('fires on {fire: true} and skips on {fire: false}', () => {
    expect(returning('{ fire: true }')).toMatchObject({ fire: true, error: null })
    expect(returning('{ fire: false }')).toMatchObject({ fire: false, error: null })
  })

  it('passes ctx and config in as JSON values', () => {
    const source = `function evaluate(ctx, config) {
      return { fire: ctx.session.user.tenant === config.tenant && config.limits[1] === 2 }
    }`
    expect(run(source, { tenant: 'acme', limits: [1, 2] }).fire).toBe(true)
    expect(run(source, { tenant: 'other', limits: [1, 2] }).fire).toBe(false)
  })

  it('passes {} when the config is null or missing', () => {
    const source =
      'function evaluate(ctx, config) { return { fire: JSON.stringify(config) === "{}" } }'
    expect(run(source, null).fire).toBe(true)
    expect(run(source, undefined).fire).toBe(true)
  })

  it('accepts extra fields and a null-prototype object beside a boolean fire', () => {
    expect(returning("{ fire: true, reason: 'ok' }").fire).toBe(true)
    expect(returning('Object.assign(Object.create(null), { fire: false })').fire).toBe(false)
  })

  const invalid: [string, string][] = [
    ['1', 'invalid result: expected an object with a boolean fire, got number'],
    ["'true'", 'invalid result: expected an object with a boolean fire, got string'],
    ['null', 'invalid result: expected an object with a boolean fire, got null'],
    ['undefined', 'invalid result: expected an object with a boolean fire, got undefined'],
    ['{}', 'invalid result: fire is missing'],
    ['{ allow: true }', 'invalid result: fire is missing'],
    ['{ fire: 1 }', 'invalid result: fire must be a boolean'],
    ["{ fire: 'true' }", 'invalid result: fire must be a boolean'],
    ['{ fire: null }', 'invalid result: fire must be a boolean'],
    ['[true]', 'invalid result: expected a plain object, got an array'],
    [
      '() => ({ fire: true })',
      'invalid result: expected an object with a boolean fire, got function',
    ],
    [
      'new (class Decision { constructor() { this.fire = true } })()',
      'invalid result: expected a plain object',
    ],
    ['new Date()', 'invalid result: expected a plain object'],
    ['{ get fire() { return true } }', 'invalid result: fire must be a data property'],
    ['Object.create({ fire: true })', 'invalid result: expected a plain object'],
  ]
  it.each(invalid)('rejects the result %s', (expression, error) => {
    expect(returning(expression)).toMatchObject({ fire: null, error })
  })

  it('rejects an inherited fire planted on Object.prototype', () => {
    const result = run('function evaluate() { Object.prototype.fire = true; return {} }')
    expect(result).toMatchObject({ fire: null, error: 'invalid result: fire is missing' })
  })

  it('reports an exception with its line', () => {
    const result = run('function evaluate(ctx) {\n  return ctx.nothing.here\n}')
    expect(result.fire).toBeNull()
    expect(result.error).toMatch(/^evaluate\(\) threw TypeError: .+ \(line 2\)$/)
  })

  it('reports a thrown non-Error value', () => {
    expect(run("function evaluate() { throw 'boom' }").error).toBe(
      'evaluate() threw a non-Error value: boom',
    )
    expect(run('function evaluate() { throw { code: 7 } }').error).toBe(
      'evaluate() threw a non-Error value: {"code":7}',
    )
  })

  it('treats a missing artifact and a corrupt one as errors', () => {
    const { artifact } = compileDecisionFunction('function evaluate() { return { fire: true } }')
    expect(evaluateDecision(null, ctx, {}).error).toBe('decision module is missing')
    const tampered = artifact.replace('fire: true', 'fire: !!1 ')
    expect(evaluateDecision(tampered, ctx, {}).error).toBe('decision module is corrupt')
    expect(evaluateDecision(artifact.slice(0, -70), ctx, {}).error).toBe(
      'decision module is corrupt',
    )
    expect(evaluateDecision('garbage', ctx, {}).error).toBe('decision module is corrupt')
  })

  it('counts fuel in steps of 10,000 through the interrupt handler', () => {
    const loop = (iterations: number) =>
      run(
        `function evaluate() { for (let i = 0; i < ${iterations}; i++) {} return { fire: true } }`,
      )
    expect(returning('{ fire: true }').fuelConsumed).toBe(0)
    // An empty loop iteration is two steps: 100,000 iterations are 200,000 fuel.
    expect(loop(100_000)).toMatchObject({ fire: true, fuelConsumed: 200_000 })
    expect(loop(499_000)).toMatchObject({ fire: true, fuelConsumed: 990_000 })
    const over = loop(505_000)
    expect(over.fire).toBeNull()
    expect(over.error).toMatch(/^(fuel limit of 1,000,000|time limit of 100 ms) exceeded$/)
    if (over.error?.startsWith('fuel')) expect(over.fuelConsumed).toBe(1_000_000)
  })

  it('reports the wall time of the evaluation', () => {
    const result = returning('{ fire: true }')
    expect(result.timeUs).toBeGreaterThan(0)
    expect(result.timeUs).toBeLessThan(1_000_000)
  })

  describe('console output', () => {
    const chatty = `function evaluate(ctx, config) {
      console.log('user', ctx.session.user.username, { n: 1 }, [2], 3, true, null, undefined)
      console.error('bad', 'news')
      console.warn('careful')
      return config.fail ? 1 : { fire: true }
    }`

    it('keeps nothing at log level off', () => {
      expect(run(chatty, {}, 'off').logs).toEqual([])
      expect(run(chatty, { fail: true }, 'off').logs).toEqual([])
    })

    it('keeps console lines at level error only when the evaluation fails', () => {
      expect(run(chatty, {}, 'error').logs).toEqual([])
      expect(run(chatty, { fail: true }, 'error').logs).toHaveLength(3)
    })

    it('keeps every console line at level info, formatted like console.log', () => {
      expect(run(chatty, {}, 'info').logs).toEqual([
        'user ann {"n":1} [2] 3 true null undefined',
        '[error] bad news',
        '[warn] careful',
      ])
    })

    it('caps the number of lines and the length of each', () => {
      const flood = `function evaluate() {
        for (let i = 0; i < 150; i++) console.log(i)
        console.info('x'.repeat(5000))
        return { fire: true }
      }`
      const logs = run(flood, {}, 'info').logs
      expect(logs).toHaveLength(101)
      expect(logs[99]).toBe('99')
      expect(logs[100]).toBe('[51 more console lines were not captured]')
      const long = run(
        "function evaluate() { console.log('y'.repeat(5000)); return { fire: true } }",
        {},
        'info',
      )
      expect(long.logs[0]).toHaveLength(1001)
    })
  })

  describe('dates', () => {
    it('runs the sandbox clock in UTC whatever the host time zone', () => {
      const previousZone = process.env['TZ']
      process.env['TZ'] = 'America/New_York'
      try {
        expect(new Date(2024, 0, 1).getTimezoneOffset()).toBe(300)
        const source = `function evaluate() {
          const d = new Date(2024, 0, 1, 12)
          console.log(d.getTimezoneOffset(), d.getHours(), d.toISOString(), String(d))
          return { fire: Date.parse('2024-01-01T12:00:00') === Date.UTC(2024, 0, 1, 12) }
        }`
        const result = run(source, {}, 'info')
        expect(result.fire).toBe(true)
        expect(result.logs).toEqual([
          '0 12 2024-01-01T12:00:00.000Z Mon Jan 01 2024 12:00:00 GMT+0000',
        ])
      } finally {
        if (previousZone === undefined) delete process.env['TZ']
        else process.env['TZ'] = previousZone
      }
    })

    it('gives the host its own Date back after an evaluation', () => {
      const hostDate = globalThis.Date
      returning('{ fire: new Date().getTime() > 0 }')
      expect(globalThis.Date).toBe(hostDate)
    })
  })
})
