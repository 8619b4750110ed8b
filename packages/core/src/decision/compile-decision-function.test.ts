import { beforeAll, describe, expect, it, vi } from 'vitest'
import { SqlState } from '../sqlstate.js'
import { compileDecisionFunction } from './compile-decision-function.js'
import { DecisionCompileError } from './decision-compile-error.js'
import { loadDecisionRuntime } from './load-runtime.js'

beforeAll(loadDecisionRuntime)

/** Fuel normally stops a loop first; on a heavily loaded machine the time limit may. */
const A_LIMIT = /^(fuel limit of 1,000,000|time limit of 100 ms) exceeded$/

function compileError(source: string): DecisionCompileError {
  try {
    compileDecisionFunction(source)
  } catch (error) {
    if (error instanceof DecisionCompileError) return error
    throw error
  }
  throw new Error('expected a compile error')
}

describe('compileDecisionFunction', () => {
  it('stores the wrapped source with a checksum line as the artifact', () => {
    const source = 'function evaluate(ctx, config) {\n  return { fire: true }\n}'
    const { artifact } = compileDecisionFunction(source)
    expect(artifact).toContain(source)
    expect(artifact.startsWith("(function () { 'use strict'; function evaluate")).toBe(true)
    expect(artifact).toMatch(/\n\/\/# palisade-decision-module v1 sha256=[0-9a-f]{64}$/)
    expect(artifact.length).toBeLessThan(source.length + 200)
  })

  it('accepts evaluate declared as a const arrow function', () => {
    expect(() =>
      compileDecisionFunction('const evaluate = (ctx) => ({ fire: false })'),
    ).not.toThrow()
  })

  it('reports a syntax error with its line and column', () => {
    const error = compileError('function evaluate(ctx) {\n  return { fire: (true }\n}')
    expect(error.message).toMatch(/^syntax error at line 2, column \d+: /)
    expect(error.line).toBe(2)
    expect(error.code).toBe(SqlState.SyntaxError)
  })

  it('rejects a source without evaluate', () => {
    const error = compileError('function decide(ctx) { return { fire: true } }')
    expect(error.message).toBe('decision function must define evaluate(ctx, config)')
    expect(error.code).toBe(SqlState.InvalidParameterValue)
  })

  it('rejects an evaluate that is not a function', () => {
    expect(compileError('const evaluate = { fire: true }').message).toBe(
      'decision function must define evaluate(ctx, config)',
    )
  })

  it('rejects an empty source', () => {
    expect(compileError('  \n ').message).toBe('decision function source is empty')
  })

  it('compiles in strict mode', () => {
    expect(compileError('with (Math) {}\nfunction evaluate() {}').message).toMatch(/^syntax error/)
    expect(compileError('leaked = 1\nfunction evaluate() {}').message).toMatch(
      /^top-level code threw ReferenceError/,
    )
  })

  it('refuses source that tries to close the wrapper early', () => {
    const breakout =
      '}); globalThis.x = 1; (function () { function evaluate() { return { fire: true } }'
    expect(compileError(breakout).message).toMatch(/^syntax error/)
  })

  it('runs the top level with the fuel limit', () => {
    const started = performance.now()
    const error = compileError('while (true) {}\nfunction evaluate() {}')
    expect(error.message).toMatch(A_LIMIT)
    expect(performance.now() - started).toBeLessThan(1000)
  })

  it('reports a top-level exception', () => {
    expect(compileError("throw new TypeError('nope')").message).toBe(
      'top-level code threw TypeError: nope (line 1)',
    )
  })

  it('refuses source nested too deeply to parse safely', () => {
    const nested = `function evaluate() { return ${'['.repeat(2000)}${']'.repeat(2000)} }`
    expect(compileError(nested).message).toBe('decision function is nested too deeply to compile')
  })

  it('compiles a 1 MB source without hanging', () => {
    const filler = `let total = 0\n${'total += 1\n'.repeat(100_000)}`
    const source = `${filler}function evaluate() { return { fire: total > 0 } }`
    expect(source.length).toBeGreaterThan(1_000_000)
    const started = performance.now()
    expect(compileDecisionFunction(source).artifact.length).toBeGreaterThan(1_000_000)
    expect(performance.now() - started).toBeLessThan(10_000)
  })

  it('stops a 1 MB source whose top level never ends', () => {
    const source = `${'// padding\n'.repeat(90_000)}for (;;) {}\nfunction evaluate() {}`
    expect(compileError(source).message).toMatch(A_LIMIT)
  })

  it('throws a clear error when the runtime was never loaded', async () => {
    vi.resetModules()
    const fresh = await import('./compile-decision-function.js')
    expect(() => fresh.compileDecisionFunction('function evaluate() {}')).toThrow(
      'decision runtime is not loaded: await loadDecisionRuntime() (or loadCore()) first',
    )
  })
})
