import { describe, expect, it } from 'vitest'
import { UpstreamStatements } from '../src/pgwire/upstream-statements.js'

describe('UpstreamStatements', () => {
  it('shares one upstream statement per SQL text and parameter types', () => {
    const cache = new UpstreamStatements('s_')
    expect(cache.acquire('SELECT 1', [])).toEqual({ name: 's_1', prepare: true })
    expect(cache.acquire('SELECT 1', [])).toEqual({ name: 's_1', prepare: false })
    expect(cache.acquire('SELECT 1', [23])).toEqual({ name: 's_2', prepare: true })
    expect(cache.acquire('SELECT 2', [])).toEqual({ name: 's_3', prepare: true })
  })

  it('prepares again a statement the upstream refused', () => {
    const cache = new UpstreamStatements('s_')
    cache.acquire('SELEC 1', [])
    cache.forget('s_1')
    expect(cache.acquire('SELEC 1', [])).toEqual({ name: 's_2', prepare: true })
  })

  it('evicts the least recently used statements no client statement uses', () => {
    const cache = new UpstreamStatements('s_', { max: 2 })
    cache.acquire('a', [])
    cache.acquire('b', [])
    cache.acquire('a', [])
    cache.acquire('c', [])
    // 'b' is the least recently used; 'a' is in use anyway.
    expect(cache.evict((name) => name === 's_1')).toEqual(['s_2'])
    expect(cache.names).toEqual(['s_1', 's_3'])
    expect(cache.acquire('b', []).prepare).toBe(true)
  })
})
