import { describe, expect, it } from 'vitest'
import { serverConfigFromArgs } from '../../src/cli/options.js'

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
})
