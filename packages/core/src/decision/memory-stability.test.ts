import { beforeAll, describe, expect, it } from 'vitest'
import { compileDecisionFunction } from './compile-decision-function.js'
import { buildDecisionContext } from './decision-context.js'
import { evaluateDecision } from './evaluate-decision.js'
import { decisionModule, loadDecisionRuntime } from './load-runtime.js'

beforeAll(loadDecisionRuntime)

describe('memory across many evaluations', () => {
  it('does not grow over 10,000 evaluations', () => {
    const ctx = buildDecisionContext({
      user: { id: 'u-1', username: 'ann', roles: ['analyst'], attributes: { tenant: 'acme' } },
      datasource: { name: 'warehouse', accessMode: 'open' },
      attributeDefinitions: [{ key: 'tenant', valueType: 'string', defaultValue: null }],
      now: new Date('2024-03-09T10:00:00Z'),
    })
    // V8 collects garbage when it likes, so the host-side bounds are loose; a leak of one
    // sandbox per evaluation would still exceed them many times over.
    // Exercises console capture, an error path and a fresh object graph on every call.
    const { artifact } = compileDecisionFunction(`function evaluate(ctx, config) {
      const seen = ctx.session.user.roles.map((role) => ({ role, tenant: ctx.session.user.tenant }))
      console.log('roles', seen)
      if (config.n % 10 === 0) throw new Error('every tenth call fails')
      return { fire: seen.length > 0 }
    }`)
    const run = (n: number) => evaluateDecision(artifact, ctx, { n }, { logLevel: 'info' })
    const wasmBytes = () => {
      const module = decisionModule()
      return module === 'restarting' ? 0 : module.getWasmMemory().buffer.byteLength
    }
    // Warm-up: both decision workers grow their WebAssembly heaps to the working size first.
    for (let n = 1; n <= 2000; n++) run(n)
    const before = process.memoryUsage()
    const wasmBefore = wasmBytes()
    let fired = 0
    for (let n = 1; n <= 10_000; n++) if (run(n).fire) fired++
    const after = process.memoryUsage()
    expect(fired).toBe(9000)
    // QuickJS's heap lives in WebAssembly memory, which only ever grows: a leaked runtime or
    // handle per evaluation would grow it by hundreds of megabytes here.
    expect(wasmBytes()).toBe(wasmBefore)
    const growthMb = (after.rss - before.rss) / 1024 / 1024
    const heapGrowthMb = (after.heapUsed - before.heapUsed) / 1024 / 1024
    console.info(
      `10,000 evaluations: rss ${growthMb.toFixed(1)} MB, heap ${heapGrowthMb.toFixed(1)} MB`,
    )
    expect(growthMb).toBeLessThan(40)
    expect(heapGrowthMb).toBeLessThan(40)
  })
})
