import { describe, expect, it, vi } from 'vitest'
import type { DecisionBinding, EffectivePolicy } from '../policy/policy.types.js'
import type { SessionInput } from '../session-context.types.js'

const SOURCE = 'function evaluate() { return { fire: false } }'

/** A module graph of its own: the decision workers are per-graph state. */
async function freshCore() {
  vi.resetModules()
  return import('../index.js')
}

/** A compiled artifact, made in a graph of its own so the tested one starts cold. */
async function artifactOf(source: string): Promise<string> {
  const other = await freshCore()
  await other.loadDecisionRuntime()
  return other.compileDecisionFunction(source).artifact
}

function filterPolicy(decision?: DecisionBinding): EffectivePolicy {
  return {
    id: 'p-1',
    name: 'positive ids',
    version: 1,
    type: 'row_filter',
    priority: 100,
    targets: [{ schemas: ['public'], tables: ['t'] }],
    filterExpression: 'id > 0',
    ...(decision ? { decision } : {}),
  }
}

function binding(artifact: string | null, fields: Partial<DecisionBinding> = {}): DecisionBinding {
  return {
    functionId: 'fn-1',
    name: 'gate',
    artifact,
    config: {},
    evaluateContext: 'query',
    onError: 'deny',
    logLevel: 'off',
    isEnabled: true,
    ...fields,
  }
}

function input(policies: EffectivePolicy[]): SessionInput {
  return {
    user: { id: 'u-1', username: 'ann', roles: [], attributes: {} },
    datasource: { name: 'shop', accessMode: 'open' },
    catalog: {
      schemas: [
        { name: 'public', tables: [{ name: 't', columns: [{ name: 'id', type: 'integer' }] }] },
      ],
    },
    attributeDefinitions: [],
    policies,
  }
}

describe('compileSession starts the decision workers only when a policy runs a function', () => {
  it('leaves them stopped without decision functions, or with a disabled or missing one', async () => {
    const core = await freshCore()
    for (const policies of [
      [],
      [filterPolicy()],
      [filterPolicy(binding(null))],
      [filterPolicy(binding(SOURCE, { isEnabled: false }))],
    ]) {
      const session = await core.compileSession(input(policies))
      expect(core.rewrite('SELECT id FROM t', session).statements).toHaveLength(1)
    }
    // Evaluating without a start is a caller bug, reported as such.
    expect(() => core.compileDecisionFunction(SOURCE)).toThrow('decision runtime is not loaded')
  })

  it.each(['session', 'query'] as const)('starts them for a %s-time function', async (when) => {
    const artifact = await artifactOf(SOURCE)
    const core = await freshCore()
    const gate = binding(artifact, { evaluateContext: when })
    const session = await core.compileSession(input([filterPolicy(gate)]))
    const [statement] = core.rewrite('SELECT id FROM t', session).statements
    // `fire: false` skips the filter and is recorded in the audit.
    expect(statement?.sql).not.toContain('id > 0')
    expect(statement?.policiesApplied[0]?.decision?.result?.fire).toBe(false)
  })
})
