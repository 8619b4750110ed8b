import { describe, expect, it } from 'vitest'
import { LoginThrottle } from '../src/logins/login-throttle.js'

/** A throttle on a clock the test moves by hand. */
function throttleAt(config: ConstructorParameters<typeof LoginThrottle>[0]) {
  let now = 1_000_000
  const throttle = new LoginThrottle(config, () => now)
  return {
    throttle,
    advance(ms: number) {
      now += ms
    },
  }
}

describe('login throttle: sliding window, doubling delays, no lock-out of a known address', () => {
  it('throttles an address past its threshold with delays that double up to the maximum', () => {
    const { throttle, advance } = throttleAt({
      addressFailures: 3,
      accountFailures: 0,
      baseDelayMs: 1000,
      maxDelayMs: 4000,
    })
    for (let i = 0; i < 2; i++) {
      expect(throttle.check(`user${i}`, '10.0.0.1').throttled).toBe(false)
      throttle.failed(`user${i}`, '10.0.0.1')
    }
    expect(throttle.check('user2', '10.0.0.1').throttled).toBe(false)
    throttle.failed('user2', '10.0.0.1')
    // The third failure locks the address for the base delay, whatever name is tried next.
    expect(throttle.check('someone-else', '10.0.0.1')).toEqual({
      throttled: true,
      scope: 'address',
      retryAfterMs: 1000,
      delayMs: 1000,
    })
    expect(throttle.check('user0', '10.0.0.2').throttled).toBe(false)
    const delays: number[] = []
    for (let i = 0; i < 4; i++) {
      const locked = throttle.check('x', '10.0.0.1')
      if (!locked.throttled) throw new Error('expected a lock')
      delays.push(locked.retryAfterMs)
      advance(locked.retryAfterMs)
      expect(throttle.check('x', '10.0.0.1').throttled).toBe(false)
      throttle.failed('x', '10.0.0.1')
    }
    expect(delays).toEqual([1000, 2000, 4000, 4000])
  })

  it('lets exactly one attempt through when a lock ends, so parallel guesses gain nothing', () => {
    const { throttle, advance } = throttleAt({ addressFailures: 1, accountFailures: 0 })
    throttle.failed('alice', '10.0.0.1')
    advance(1000)
    expect(throttle.check('alice', '10.0.0.1').throttled).toBe(false)
    // The second of two simultaneous attempts waits for the first one's outcome.
    expect(throttle.check('alice', '10.0.0.1').throttled).toBe(true)
    throttle.succeeded('alice', '10.0.0.1')
    expect(throttle.check('alice', '10.0.0.1').throttled).toBe(false)
  })

  it('forgets failures that leave the window', () => {
    const { throttle, advance } = throttleAt({
      addressFailures: 2,
      accountFailures: 0,
      windowMs: 60_000,
    })
    throttle.failed('a', '10.0.0.1')
    advance(50_000)
    throttle.failed('b', '10.0.0.1')
    expect(throttle.check('c', '10.0.0.1').throttled).toBe(true)
    advance(11_000)
    expect(throttle.check('c', '10.0.0.1').throttled).toBe(false)
    expect(throttle.list()).toEqual([])
  })

  it('slows guesses on one account from many addresses, but not from an address it logged in from', () => {
    const { throttle } = throttleAt({ addressFailures: 0, accountFailures: 3 })
    throttle.succeeded('alice', '192.0.2.7')
    for (let i = 0; i < 3; i++) throttle.failed('alice', `198.51.100.${i}`)
    expect(throttle.check('alice', '198.51.100.99')).toMatchObject({
      throttled: true,
      scope: 'account',
    })
    // The real user's own machine still gets its password checked.
    expect(throttle.check('alice', '192.0.2.7').throttled).toBe(false)
    // Its typos do not count against the account either.
    throttle.failed('alice', '192.0.2.7')
    expect(throttle.list()).toEqual([
      expect.objectContaining({ scope: 'account', key: 'alice', failures: 3 }),
    ])
  })

  it('treats an unknown account name exactly like a real one', () => {
    const { throttle } = throttleAt({ addressFailures: 0, accountFailures: 2 })
    for (const name of ['alice', 'nobody-by-that-name']) {
      throttle.failed(name, '198.51.100.1')
      throttle.failed(name, '198.51.100.2')
    }
    expect(throttle.check('alice', '198.51.100.3')).toEqual(
      throttle.check('nobody-by-that-name', '198.51.100.3'),
    )
  })

  it('clears what a successful login failed from its address, and what an admin clears', () => {
    const { throttle } = throttleAt({ addressFailures: 3, accountFailures: 0 })
    throttle.failed('alice', '10.0.0.1')
    throttle.failed('alice', '10.0.0.1')
    throttle.failed('mallory', '10.0.0.1')
    expect(throttle.check('bob', '10.0.0.1').throttled).toBe(true)
    throttle.succeeded('alice', '10.0.0.1')
    // alice's two typos are gone; mallory's failure stays.
    expect(throttle.check('bob', '10.0.0.1').throttled).toBe(false)
    throttle.failed('mallory', '10.0.0.1')
    throttle.failed('mallory', '10.0.0.1')
    expect(throttle.list()).toEqual([
      expect.objectContaining({ scope: 'address', key: '10.0.0.1', failures: 3 }),
    ])
    expect(throttle.clear('address', '10.0.0.1')).toBe(true)
    expect(throttle.check('mallory', '10.0.0.1').throttled).toBe(false)
    expect(throttle.list()).toEqual([])
  })

  it('refuses absurd settings with a clear error', () => {
    expect(() => new LoginThrottle({ windowMs: 0 })).toThrow(/window/)
    expect(() => new LoginThrottle({ addressFailures: -1 })).toThrow(/at least 0/)
    expect(() => new LoginThrottle({ accountFailures: 1.5 })).toThrow(/integers/)
    expect(() => new LoginThrottle({ baseDelayMs: 2000, maxDelayMs: 1000 })).toThrow(/maximum/)
  })
})
