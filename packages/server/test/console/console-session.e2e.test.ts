import { join } from 'node:path'
import pg from 'pg'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PalisadeServer } from '../../src/index.js'
import { PASSWORD, SYSTEM_ACTOR } from '../fixtures/seed-store.js'
import { artifactDir, CHROMIUM, launch, NO_BROWSER, signIn, startConsoleServer } from './browser.js'

if (!CHROMIUM) console.warn(NO_BROWSER)

/**
 * The console's session cookie in a real browser: one browser profile (a context) with several
 * tabs, as an admin uses it. A reload and a new tab on a deep link stay signed in; signing out in
 * one tab ends the others at their next request.
 */
describe.skipIf(!CHROMIUM)('web console session across reloads and tabs, in Chromium', () => {
  let server: PalisadeServer
  let browser: Browser
  let profile: BrowserContext
  let first: Page
  let second: Page
  let base: string
  let policyId: string
  const problems: string[] = []
  const shots = artifactDir('session')
  const shot = (page: Page, name: string) =>
    page.screenshot({ path: join(shots, `${name}.png`), fullPage: true })
  const signedIn = (page: Page) => page.getByText('Signed in as').waitFor()
  const signInForm = (page: Page) =>
    page.getByRole('heading', { name: 'Palisade console' }).waitFor()

  /** A tab of the profile that fails the test on any script error. */
  async function tab(): Promise<Page> {
    const page = await profile.newPage()
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`))
    page.setDefaultTimeout(15_000)
    return page
  }

  beforeAll(async () => {
    server = await startConsoleServer()
    base = server.admin.url
    const root = await server.store.users.create(
      { username: 'root', password: PASSWORD, is_admin: true },
      SYSTEM_ACTOR,
    )
    const policy = await server.store.policies.create(
      {
        name: 'tenant-rows',
        policy_type: 'row_filter',
        targets: [{ schemas: ['public'], tables: ['orders'] }],
        filter_expression: "tenant = 'acme'",
      },
      root.id,
    )
    policyId = policy.id
    // One statement in the query audit, for a deep link to its entry.
    const viewer = await server.store.users.create(
      { username: 'viewer', password: PASSWORD },
      root.id,
    )
    const shop = await server.store.datasources.create(
      { name: 'shop', ds_type: 'pglite', access_mode: 'open', config: {} },
      root.id,
    )
    await server.store.access.setUsers(shop.id, { user_ids: [viewer.id] }, root.id)
    const client = new pg.Client({
      host: '127.0.0.1',
      port: server.dataPlane.port,
      user: 'viewer',
      password: PASSWORD,
      database: 'shop',
    })
    await client.connect()
    await client.query('SELECT 42 AS answer')
    await client.end()
    await server.store.audit.queries.flush()
    browser = await launch()
    profile = await browser.newContext({ viewport: { width: 1280, height: 900 } })
    first = await tab()
  })
  afterAll(async () => {
    await browser?.close()
    await server?.close()
  })

  it('keeps the token in an HttpOnly, SameSite=Strict cookie that the page cannot read', async () => {
    await signIn(first, base, 'root', PASSWORD)
    await signedIn(first)
    const cookies = await profile.cookies(`${base}/api/v1/`)
    expect(cookies).toHaveLength(1)
    expect(cookies[0]).toMatchObject({
      name: 'palisade_session',
      path: '/api/v1',
      httpOnly: true,
      sameSite: 'Strict',
      secure: false,
    })
    await expect(first.evaluate('document.cookie')).resolves.toBe('')
  })

  it('stays signed in after a reload', async () => {
    await first.reload()
    await signedIn(first)
    await first.getByRole('heading', { name: 'Overview' }).waitFor()
    await shot(first, '01-after-reload')
  })

  it('opens a deep link to a policy in a new tab, signed in, and saves there with the CSRF token', async () => {
    second = await tab()
    await second.goto(`${base}/ui#/policies/${policyId}`)
    await signedIn(second)
    await second.getByRole('heading', { name: 'Policy tenant-rows' }).waitFor()
    await shot(second, '02-deep-link-policy')
    // A write from the new tab: the page found the session's CSRF token after loading.
    await second.getByLabel('Description').fill('rows of acme only')
    await second.getByRole('button', { name: 'Save policy' }).click()
    await expect
      .poll(async () => (await server.store.policies.get(policyId)).description)
      .toBe('rows of acme only')
  })

  it('opens a deep link to a query-audit entry in a new tab', async () => {
    await first
      .getByRole('navigation', { name: 'Sections' })
      .getByRole('link', { name: 'Query audit' })
      .click()
    await first.getByRole('button', { name: 'SELECT 42 AS answer' }).click()
    const link = await first
      .getByRole('link', { name: 'Link to this statement' })
      .getAttribute('href')
    expect(link).toMatch(/^#\/audit\/queries\?entry=/)
    const third = await tab()
    await third.goto(`${base}/ui${link}`)
    await signedIn(third)
    await expect(third.getByTestId('original-sql').textContent()).resolves.toBe(
      'SELECT 42 AS answer',
    )
    await shot(third, '03-deep-link-audit-entry')
    await third.close()
  })

  it('signs the other tabs out at their next request when one tab signs out', async () => {
    await first.getByRole('button', { name: 'Sign out' }).click()
    await signInForm(first)
    expect(await profile.cookies(`${base}/api/v1/`)).toEqual([])
    // The other tab still shows its page until it next asks the API for something.
    await second
      .getByRole('navigation', { name: 'Sections' })
      .getByRole('link', { name: 'Users' })
      .click()
    await signInForm(second)
    await shot(second, '04-signed-out-elsewhere')
    await second.reload()
    await signInForm(second)
    expect(problems).toEqual([])
  })
})
