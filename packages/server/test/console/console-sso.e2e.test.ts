import { join } from 'node:path'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PalisadeServer } from '../../src/index.js'
import { OidcIssuer } from '../fixtures/oidc-issuer.js'
import { PASSWORD, SYSTEM_ACTOR } from '../fixtures/seed-store.js'
import { artifactDir, CHROMIUM, launch, NO_BROWSER, startConsoleServer } from './browser.js'

if (!CHROMIUM) console.warn(NO_BROWSER)

/**
 * Console sign-in through an identity provider in a real browser (docs/sso.md#console-sign-in):
 * "Sign in with acme", the provider's own login page, back in the console signed in; and a user
 * of the provider without the admin claim, who stays on the sign-in page with the reason.
 */
describe.skipIf(!CHROMIUM)('web console sign-in through an identity provider, in Chromium', () => {
  let server: PalisadeServer
  let issuer: OidcIssuer
  let browser: Browser
  let base: string
  const problems: string[] = []
  const shots = artifactDir('sso')
  const shot = (page: Page, name: string) =>
    page.screenshot({ path: join(shots, `${name}.png`), fullPage: true })

  /** A fresh browser profile (no cookies) with one tab that fails the test on script errors. */
  async function freshTab(): Promise<{ profile: BrowserContext; page: Page }> {
    const profile = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    const page = await profile.newPage()
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`))
    page.setDefaultTimeout(15_000)
    return { profile, page }
  }

  /** From the console's sign-in page through the provider's login form. */
  async function signInThroughProvider(page: Page, login: string): Promise<void> {
    await page.goto(`${base}/ui`)
    await page.getByRole('button', { name: 'Sign in with acme' }).click()
    await page.waitForURL(`${issuer.issuer}/**`)
    await page.locator('input[name="login"]').fill(login)
    await page.locator('input[name="password"]').fill('any password')
    await shot(page, `provider-login-${login}`)
    await page.getByRole('button', { name: 'Sign-in' }).click()
  }

  beforeAll(async () => {
    issuer = await OidcIssuer.start()
    server = await startConsoleServer()
    base = server.admin.url
    const root = await server.store.users.create(
      { username: 'root', password: PASSWORD, is_admin: true },
      SYSTEM_ACTOR,
    )
    issuer.addWebClient({
      clientId: 'palisade-console',
      secret: 'console-secret-for-tests',
      redirectUri: `${base}/ui`,
    })
    issuer.addAccount('dana', { preferred_username: 'dana', groups: ['palisade-admins'] })
    issuer.addAccount('eve', { preferred_username: 'eve', groups: ['staff'] })
    await server.store.identityProviders.create(
      {
        name: 'acme',
        issuer: issuer.issuer,
        client_id: 'palisade-console',
        client_secret: 'console-secret-for-tests',
        console_sign_in: true,
        admin_claim: { claim: 'groups', value: 'palisade-admins' },
        jit_users: true,
      },
      root.id,
    )
    browser = await launch()
  })
  afterAll(async () => {
    await browser?.close()
    await server?.close()
    await issuer?.close()
  })

  it('signs an admin of the provider in: provider login, then the console, signed in', async () => {
    const { profile, page } = await freshTab()
    await signInThroughProvider(page, 'dana')
    await page.getByText('Signed in as').waitFor()
    await page.getByRole('heading', { name: 'Overview' }).waitFor()
    // The provider's parameters left the address; the session is the usual cookie.
    expect(new URL(page.url()).search).toBe('')
    // Cookies are per host, not port: the provider's own (same loopback host) are left out.
    const cookies = (await profile.cookies(`${base}/api/v1/`)).filter((c) =>
      c.name.startsWith('palisade_'),
    )
    expect(cookies.map((c) => c.name)).toEqual(['palisade_session'])
    expect(cookies[0]).toMatchObject({ httpOnly: true, sameSite: 'Strict' })
    await shot(page, '01-signed-in-through-provider')
    // A write works from this session (the CSRF token came with it).
    await page
      .getByRole('navigation', { name: 'Sections' })
      .getByRole('link', { name: 'Roles' })
      .click()
    await page.getByLabel('Role name').fill('sso-made-role')
    await page.getByRole('button', { name: 'Create role' }).click()
    await expect
      .poll(async () => (await server.store.roles.list({ search: 'sso-made-role' })).total)
      .toBe(1)
    // A reload stays signed in, as any console session.
    await page.reload()
    await page.getByText('Signed in as').waitFor()
    await profile.close()
  })

  it('keeps a user without the admin claim on the sign-in page, saying why', async () => {
    const { profile, page } = await freshTab()
    await signInThroughProvider(page, 'eve')
    await page.getByRole('heading', { name: 'Palisade console' }).waitFor()
    await page
      .getByText('your account at the identity provider does not grant admin access')
      .waitFor()
    await shot(page, '02-refused-without-admin-claim')
    const cookies = await profile.cookies(`${base}/api/v1/`)
    expect(cookies.filter((c) => c.name.startsWith('palisade_'))).toEqual([])
    await expect
      .poll(async () => {
        const audit = await server.store.logins.list({ plane: 'admin', username: 'eve' })
        return audit.data.map((e) => e.reason)
      })
      .toContain('admin_claim_missing')
    // The password form stays for local admins (break-glass).
    await page.getByLabel('Username').fill('root')
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    await page.getByText('Signed in as').waitFor()
    await profile.close()
  })

  it('raised no script errors', () => {
    expect(problems).toEqual([])
  })
})
