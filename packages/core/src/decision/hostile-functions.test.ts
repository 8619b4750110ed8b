import { beforeAll, describe, expect, it } from 'vitest'
import { compileDecisionFunction } from './compile-decision-function.js'
import { buildDecisionContext } from './decision-context.js'
import { evaluateDecision } from './evaluate-decision.js'
import { loadDecisionRuntime } from './load-runtime.js'

const ctx = buildDecisionContext({
  user: { id: 'u-1', username: 'ann', roles: ['analyst'], attributes: {} },
  datasource: { name: 'warehouse', accessMode: 'open' },
  attributeDefinitions: [],
  now: new Date('2024-03-09T10:00:00Z'),
})

let normal = ''

/** Fuel normally stops a loop first; on a heavily loaded machine the time limit may. */
const A_LIMIT =
  /^(fuel limit of 1,000,000|time limit of 100 ms) exceeded$|^decision function exceeded the \d+ ms time limit$/

beforeAll(async () => {
  await loadDecisionRuntime()
  normal = compileDecisionFunction(
    "function evaluate(ctx) { return { fire: ctx.session.user.roles.includes('analyst') } }",
  ).artifact
})

function run(source: string) {
  const { artifact } = compileDecisionFunction(source)
  const started = performance.now()
  const result = evaluateDecision(artifact, ctx, {}, { logLevel: 'info' })
  return { ...result, ms: performance.now() - started }
}

/** Runs a hostile function, then checks that the next normal evaluation still works. */
function hostile(body: string) {
  const result = run(`function evaluate(ctx, config) {\n${body}\n}`)
  expect(evaluateDecision(normal, ctx, {})).toMatchObject({ fire: true, error: null })
  return result
}

describe('hostile decision functions', () => {
  it('stops while (true) {} with the fuel limit', () => {
    const result = hostile('while (true) {}')
    expect(result).toMatchObject({ fire: null, error: A_LIMIT })
    expect(result.ms).toBeLessThan(1000)
  })

  it('stops a loop that swallows the interrupt in try/catch/finally', () => {
    const result = hostile(`
      for (;;) {
        try { for (;;) {} } catch (e) {} finally { for (;;) {} }
      }`)
    expect(result.error).toMatch(A_LIMIT)
    expect(result.ms).toBeLessThan(1000)
  })

  it('stops unbounded recursion at the stack limit', () => {
    const result = hostile('function down(n) { return down(n + 1) + 1 }\nreturn down(0)')
    expect(result.error).toBe('stack limit exceeded (recursion or nesting too deep)')
  })

  it('stops recursion that catches its own stack overflow', () => {
    // Each step builds a full backtrace, so 10,000 steps take about a second: the sandbox's
    // time limit is only checked when the interrupt handler runs, so the worker's hard limit
    // may be what stops it (see docs/decision-functions.md).
    const result = hostile(`
      function down() { try { return down() } catch (e) { return down() } }
      return down()`)
    expect(result.error).toMatch(A_LIMIT)
    expect(result.ms).toBeLessThan(10_000)
  })

  it('stops a huge string at the memory limit', () => {
    expect(hostile("return { fire: 'x'.repeat(1e9).length > 0 }").error).toBe(
      'memory limit of 8 MB exceeded',
    )
  })

  it('stops a growing array', () => {
    const result = hostile('const items = []\nfor (;;) items.push({ n: items.length })')
    expect(result.fire).toBeNull()
    expect(result.error).toMatch(
      /^(memory limit of 8 MB|fuel limit of 1,000,000|time limit of 100 ms) exceeded$/,
    )
    expect(result.ms).toBeLessThan(2000)
  })

  it('stops a string that doubles forever', () => {
    expect(hostile("let s = 'x'\nfor (;;) s += s").fire).toBeNull()
  })

  it('stops JSON.parse of a huge string', () => {
    const result = hostile("return { fire: JSON.parse('[' + '1,'.repeat(5e6) + '1]').length > 0 }")
    expect(result.error).toBe('memory limit of 8 MB exceeded')
  })

  it('stops catastrophic regular expression backtracking', () => {
    const result = hostile("return { fire: /^(a+)+$/.test('a'.repeat(40) + 'b') }")
    expect(result.error).toMatch(A_LIMIT)
  })

  it('stops a console.log whose argument loops in toJSON', () => {
    expect(hostile('console.log({ toJSON() { for (;;) {} } })').error).toMatch(A_LIMIT)
  })

  it('reads the result with built-ins captured before the function ran', () => {
    const result = hostile(`
      Object.getPrototypeOf = () => Object.prototype
      Object.getOwnPropertyDescriptor = () => ({ value: true })
      Object.prototype.hasOwnProperty = () => true
      Array.isArray = () => false
      JSON.parse = () => ({})
      Reflect.get = () => 'spoofed'
      String.prototype.slice = () => ''
      return [{ fire: true }]`)
    expect(result.error).toBe('invalid result: expected a plain object, got an array')
  })

  it('finds no host objects on globalThis', () => {
    const names = `const names = Object.getOwnPropertyNames(globalThis)
      console.log(names.join(','))
      return { fire: true }`
    const listed = hostile(names).logs[0]?.split(',') ?? []
    for (const name of [
      'require',
      'process',
      'module',
      'fetch',
      'setTimeout',
      'setInterval',
      'setImmediate',
      'queueMicrotask',
      'eval',
      'Promise',
      'WebAssembly',
      'SharedArrayBuffer',
      'Atomics',
      'WeakRef',
      'FinalizationRegistry',
      'Proxy',
      'XMLHttpRequest',
      'Buffer',
      'std',
      'os',
    ]) {
      expect(listed).not.toContain(name)
    }
    expect(listed).toContain('JSON')
    expect(listed).toContain('console')
  })

  it('blocks every Function constructor and eval', () => {
    const probe = `const attempts = [
        () => Function('return 1')(),
        () => new Function('return 1')(),
        () => (function () {}).constructor('return 1')(),
        () => (function* () {}).constructor('yield 1')().next(),
        () => (async function () {}).constructor('return 1')(),
        () => (async function* () {}).constructor('yield 1')(),
        () => eval('1'),
      ]
      for (const attempt of attempts) {
        try { attempt(); console.log('ran') } catch (e) { console.log(e.name + ': ' + e.message) }
      }
      return { fire: (function () {}) instanceof Function }`
    const result = hostile(probe)
    expect(result.fire).toBe(true)
    expect(result.logs).toEqual([
      ...Array(6).fill('EvalError: code generation from strings is disabled in decision functions'),
      "ReferenceError: 'eval' is not defined",
    ])
  })

  it('treats a returned Proxy as an error', () => {
    const result = hostile('return new Proxy({ fire: true }, {})')
    expect(result.fire).toBeNull()
    expect(result.error).toMatch(/Proxy/)
  })

  it('treats a throw of a non-Error as an error', () => {
    expect(hostile('throw Symbol("nope")').error).toBe(
      'evaluate() threw a non-Error value: Symbol(nope)',
    )
  })

  it('survives an error whose message getter throws or loops', () => {
    const throwing = hostile(
      "throw { get message() { throw new Error('again') }, toString() { return 'odd' } }",
    )
    expect(throwing.error).toBe('evaluate() threw a non-Error value: odd')
    const looping = hostile('throw { get message() { for (;;) {} } }')
    expect(looping.error).toMatch(A_LIMIT)
  })

  it('never runs Promise jobs: an async evaluate is an invalid result', () => {
    const result = run(`async function evaluate() {
      await null
      for (;;) {}
    }`)
    expect(result.error).toBe('invalid result: expected a plain object')
    expect(result.ms).toBeLessThan(500)
  })

  it('evaluates a 1 MB source', () => {
    const source = `let total = 0\n${'total += 1\n'.repeat(100_000)}function evaluate() { return { fire: total === 100000 } }`
    expect(run(source)).toMatchObject({ fire: true, error: null })
  })

  it('lets no state cross from one evaluation to the next', () => {
    const polluter = run(`
      globalThis.leftover = 1
      Object.prototype.polluted = true
      Array.prototype.includes = () => true
      JSON.parse = () => ({ session: { user: { roles: ['admin'] } } })
      Symbol.for('palisade').description
      function evaluate() { return { fire: true } }`)
    expect(polluter.fire).toBe(true)
    const observer = run(`function evaluate(ctx) {
      return { fire: typeof globalThis.leftover === 'undefined' && ({}).polluted === undefined &&
        ![].includes(1) && !ctx.session.user.roles.includes('admin') }
    }`)
    expect(observer).toMatchObject({ fire: true, error: null })
  })

  it('terminates a function that works between interrupt checks and recovers at once', async () => {
    // Earlier tests may have terminated a worker; wait until both workers are loaded.
    await loadDecisionRuntime()
    // One indexOf over 4 MB takes milliseconds and counts as one step: the interrupt handler
    // would only run every 10,000 of them, so the worker's hard limit has to stop it.
    const slow = compileDecisionFunction(`function evaluate() {
      const s = 'a'.repeat(4e6)
      let n = 0
      for (;;) n += s.indexOf('b')
    }`).artifact
    const started = performance.now()
    const result = evaluateDecision(slow, ctx, {})
    expect(result.fire).toBeNull()
    expect(result.error).toMatch(/^decision function exceeded the \d+ ms time limit$/)
    expect(performance.now() - started).toBeLessThan(5_000)
    // The other worker takes over without waiting for QuickJS to load.
    expect(evaluateDecision(normal, ctx, {})).toMatchObject({ fire: true, error: null })
  })

  it('does not let one evaluation see another one stalled in a terminated worker', async () => {
    await loadDecisionRuntime()
    for (let i = 0; i < 5; i++) {
      expect(evaluateDecision(normal, ctx, {})).toMatchObject({ fire: true, error: null })
    }
  })
})
