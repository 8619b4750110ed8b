import { describe, expect, it } from 'vitest'
import { serverConfigFromArgs } from '../../src/cli/options.js'
import { DEFAULT_DATA_PLANE_CONFIG } from '../../src/config.js'

describe('palisade serve token-login settings (docs/sso.md)', () => {
  it('leaves token logins off by default', () => {
    const config = serverConfigFromArgs({ 'log-level': 'silent' }, {})
    expect(config.dataPlane?.tokenLogins).toBe(false)
    expect(config.dataPlane?.tokenLoginsWithoutTls).toBe(false)
  })

  it('reads the flags and their environment variables', () => {
    const flags = serverConfigFromArgs(
      { 'log-level': 'silent', 'token-logins': true, 'token-session-grace': '5' },
      {},
    )
    expect(flags.dataPlane).toMatchObject({ tokenLogins: true, tokenSessionGraceSeconds: 5 })
    const env = serverConfigFromArgs(
      { 'log-level': 'silent' },
      { PALISADE_TOKEN_LOGINS: 'true', PALISADE_TOKEN_LOGINS_WITHOUT_TLS: 'true' },
    )
    expect(env.dataPlane).toMatchObject({ tokenLogins: true, tokenLoginsWithoutTls: true })
  })

  it('refuses a negative grace', () => {
    expect(() => serverConfigFromArgs({ 'token-session-grace': '-1' }, {})).toThrow()
  })

  it('reads the token clock skew for both planes, 30 s when not given', () => {
    const flags = serverConfigFromArgs({ 'log-level': 'silent', 'token-clock-skew': '5' }, {})
    expect(flags.dataPlane).toMatchObject({ tokenClockSkewSeconds: 5 })
    const env = serverConfigFromArgs(
      { 'log-level': 'silent' },
      { PALISADE_TOKEN_CLOCK_SKEW_SECONDS: '0' },
    )
    expect(env.dataPlane).toMatchObject({ tokenClockSkewSeconds: 0 })
    const none = serverConfigFromArgs({ 'log-level': 'silent' }, {})
    expect(none.dataPlane?.tokenClockSkewSeconds).toBeUndefined()
    expect(DEFAULT_DATA_PLANE_CONFIG.tokenClockSkewSeconds).toBe(30)
    expect(() => serverConfigFromArgs({ 'token-clock-skew': '-1' }, {})).toThrow()
    expect(() => serverConfigFromArgs({ 'token-clock-skew': 'soon' }, {})).toThrow()
  })

  it('reads the console URL registered at identity providers, and refuses a malformed one', () => {
    const config = serverConfigFromArgs(
      { 'log-level': 'silent', 'console-url': 'https://palisade.example.com/ui/' },
      {},
    )
    expect(config.admin?.consoleUrl).toBe('https://palisade.example.com/ui')
    expect(() => serverConfigFromArgs({ 'console-url': 'palisade/ui' }, {})).toThrow()
    expect(() =>
      serverConfigFromArgs({ 'console-url': 'https://x.example.com/ui?a=1' }, {}),
    ).toThrow()
  })
})
