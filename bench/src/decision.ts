/**
 * bench/decision: the decision-function sandbox. Compile time; evaluation median and p95 for a
 * small function (a fresh sandbox every time) and for one looping 100,000 times; how long
 * `while (true) {}` runs before it is stopped. Targets: small ≤ 0.3 ms, loop stopped ≤ 50 ms.
 */
import {
  buildDecisionContext,
  compileDecisionFunction,
  evaluateDecision,
  loadDecisionRuntime,
} from '../../packages/core/src/decision/index.js'
import { fmt, type Summary, summarize, timeMicros } from './stats.js'

const ctx = buildDecisionContext({
  user: { id: 'u-1', username: 'alice', roles: ['analyst', 'staff'], attributes: { tenant: 7 } },
  datasource: { name: 'shop', accessMode: 'open' },
  attributeDefinitions: [{ key: 'tenant', valueType: 'integer', defaultValue: null }],
  now: new Date(),
})

const SMALL = `function evaluate(ctx, config) {
  const { roles, tenant } = ctx.session.user
  return { fire: !roles.includes(config.exempt) && tenant !== null }
}`

const LOOP = `function evaluate(ctx) {
  let total = 0
  for (let i = 0; i < 100000; i++) total += i % 7
  return { fire: total > 0 }
}`

const FOREVER = 'function evaluate() { while (true) {} }'

function row(measure: string, summary: Summary, note = ''): void {
  console.log(`| ${measure} | ${fmt(summary.median)} | ${fmt(summary.p95)} | ${note} |`)
}

/** Times evaluations with the event loop turning in between, as between queries on a server. */
async function timeBetweenTurns(fn: () => void, iterations: number): Promise<Summary> {
  const samples: number[] = []
  for (let i = 0; i < iterations + 100; i++) {
    await new Promise((resolve) => setImmediate(resolve))
    const start = process.hrtime.bigint()
    fn()
    if (i >= 100) samples.push(Number(process.hrtime.bigint() - start) / 1000)
  }
  return summarize(samples)
}

export async function run(): Promise<void> {
  const loadStart = performance.now()
  await loadDecisionRuntime()
  console.log(`QuickJS load and warm-up: ${fmt(performance.now() - loadStart)} ms\n`)
  console.log('| measure | median µs | p95 µs | notes |')
  console.log('|---|---|---|---|')

  row(
    'compile small function',
    timeMicros(() => compileDecisionFunction(SMALL), 500),
  )
  const big = `${'// a comment line of some forty characters\n'.repeat(1500)}${SMALL}`
  const bigCompile = timeMicros(() => compileDecisionFunction(big), 20, 3)
  row(`compile ${Math.round(big.length / 1024)} KiB source`, bigCompile)

  const small = compileDecisionFunction(SMALL).artifact
  const config = { exempt: 'auditor' }
  const check = evaluateDecision(small, ctx, config)
  const smallNote = `fire ${check.fire}, fuel ${check.fuelConsumed}`
  row(
    'evaluate small, back to back',
    timeMicros(() => evaluateDecision(small, ctx, config), 3000),
    smallNote,
  )
  const pooled = await timeBetweenTurns(() => evaluateDecision(small, ctx, config), 3000)
  row('evaluate small, event loop turns between', pooled, 'sandbox prepared ahead')

  const loop = compileDecisionFunction(LOOP).artifact
  const looped = evaluateDecision(loop, ctx, {})
  const loopNote = `fire ${looped.fire}, fuel ${looped.fuelConsumed.toLocaleString('en-US')}`
  row(
    'evaluate 100,000-iteration loop',
    timeMicros(() => evaluateDecision(loop, ctx, {}), 200, 20),
    loopNote,
  )

  const forever = compileDecisionFunction(FOREVER).artifact
  const stopped = evaluateDecision(forever, ctx, {})
  const stopNote = `${stopped.error}, fuel ${stopped.fuelConsumed.toLocaleString('en-US')}`
  row(
    'while (true) {} until stopped',
    timeMicros(() => evaluateDecision(forever, ctx, {}), 50, 5),
    stopNote,
  )
}
