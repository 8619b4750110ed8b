import { describe, expect, it } from 'vitest'
import { isLoopback } from '../src/pgwire/peer-address.js'

describe('loopback peers (token logins without TLS)', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.1.2.3', true],
    ['::1', true],
    ['::ffff:127.0.0.1', true],
    ['10.0.0.1', false],
    ['::ffff:10.0.0.1', false],
    ['127.0.0.1.evil', false],
    ['', false],
  ])('%s is loopback: %s', (address, expected) => {
    expect(isLoopback(address)).toBe(expected)
  })
})
