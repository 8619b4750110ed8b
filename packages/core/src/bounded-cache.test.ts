import { describe, expect, it } from 'vitest'
import { BoundedCache } from './bounded-cache.js'

describe('BoundedCache', () => {
  it('never holds more than its bound', () => {
    const cache = new BoundedCache<number, number>(4)
    for (let i = 0; i < 100; i++) {
      cache.set(i, i)
      expect(cache.size).toBeLessThanOrEqual(4)
    }
    // The most recent inserts are still there.
    expect(cache.get(99)).toBe(99)
    expect(cache.get(98)).toBe(98)
    expect(cache.get(0)).toBeUndefined()
  })

  it('keeps an entry that is used, and drops one that is not', () => {
    const cache = new BoundedCache<string, number>(4)
    cache.set('a', 1)
    cache.set('b', 2)
    expect(cache.get('a')).toBe(1)
    cache.set('c', 3)
    cache.set('d', 4)
    expect(cache.get('a')).toBe(1)
    cache.set('e', 5)
    expect(cache.get('b')).toBeUndefined()
    expect(cache.get('a')).toBe(1)
    expect(cache.get('e')).toBe(5)
  })

  it('replaces a value set again without growing', () => {
    const cache = new BoundedCache<string, number>(4)
    cache.set('a', 1)
    cache.set('a', 2)
    expect(cache.get('a')).toBe(2)
    expect(cache.size).toBe(1)
  })
})
