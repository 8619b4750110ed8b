import { describe, expect, it } from 'vitest'
import { BoundedCache } from './bounded-cache.js'

describe('BoundedCache', () => {
  it('keeps at most max entries and evicts the least recently used', () => {
    const cache = new BoundedCache<string, number>(2)
    cache.set('a', 1)
    cache.set('b', 2)
    expect(cache.get('a')).toBe(1)
    cache.set('c', 3)
    expect(cache.get('b')).toBeUndefined()
    expect(cache.get('a')).toBe(1)
    expect(cache.get('c')).toBe(3)
    expect(cache.size).toBe(2)
  })

  it('replaces a value set again without growing', () => {
    const cache = new BoundedCache<string, number>(2)
    cache.set('a', 1)
    cache.set('a', 2)
    expect(cache.get('a')).toBe(2)
    expect(cache.size).toBe(1)
  })
})
