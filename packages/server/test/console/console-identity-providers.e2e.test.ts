import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PalisadeServer } from '../../src/index.js'
import { PASSWORD, SYSTEM_ACTOR } from '../fixtures/seed-store.js'
import {
  artifactDir,
  CHROMIUM,
  goToSection,
  launch,
  NO_BROWSER,
  openPage,
  signIn,
  startConsoleServer,
} from './browser.js'

if (!CHROMIUM) console.warn(NO_BROWSER)

const SECRET = 'client-secret-typed-once'
const ISSUER = 'https://idp.example.com/realms/acme'

/**
 * The identity providers page in a real browser (docs/console.md#identity-providers): a refused
 * create that saves nothing, a provider created with every field, its write-only secret, an edited
 * mapping, a user's provider link set and removed, and the provider deleted.
 */
describe.skipIf(!CHROMIUM)('web console identity providers, in Chromium', () => {
  let server: PalisadeServer
  let browser: Browser
  let page: Page
  let base: string
  let rootId: string
  let danaId: string
  let analystsId: string
  let providerId: string
  const problems: string[] = []
  const shots = artifactDir('identity-providers')
  const shot = (name: string) =>
    page.screenshot({ path: join(shots, `${name}.png`), fullPage: true })
  const goTo = (section: string) => goToSection(page, section)
  const providers = () => server.store.identityProviders.list({})

  beforeAll(async () => {
    server = await startConsoleServer()
    base = server.admin.url
    const root = await server.store.users.create(
      { username: 'root', password: PASSWORD, is_admin: true },
      SYSTEM_ACTOR,
    )
    rootId = root.id
    await server.store.attributes.create(
      { key: 'tenant', entity_type: 'user', value_type: 'string' },
      root.id,
    )
    analystsId = (await server.store.roles.create({ name: 'analysts' }, root.id)).id
    danaId = (await server.store.users.create({ username: 'dana', password: PASSWORD }, root.id)).id
    browser = await launch()
    page = await openPage(browser, problems)
    await signIn(page, base, 'root', PASSWORD)
    await page.getByText('Signed in as').waitFor()
  })
  afterAll(async () => {
    await browser?.close()
    await server?.close()
  })

  it("shows the API's 422 by field for a bad issuer and a missing client ID, and saves nothing", async () => {
    await goTo('Identity providers')
    await page.getByText('No identity providers yet.').waitFor()
    await page.getByLabel('Name', { exact: true }).fill('broken')
    await page.getByLabel('Issuer URL').fill('ftp://idp.example.com')
    await page.getByRole('button', { name: 'Create identity provider' }).click()
    const alert = page.getByRole('alert')
    await alert.waitFor()
    const text = await alert.textContent()
    expect(text).toMatch(/Error 422/)
    expect(text).toMatch(/issuer: issuer must use https/)
    expect(text).toMatch(/client_id: client_id must be at least 1 character/)
    await expect(page.getByLabel('Issuer URL').getAttribute('aria-invalid')).resolves.toBe('true')
    await expect(
      page.getByLabel('Client ID', { exact: true }).getAttribute('aria-invalid'),
    ).resolves.toBe('true')
    await expect(
      page.getByLabel('Name', { exact: true }).getAttribute('aria-invalid'),
    ).resolves.toBe(null)
    await shot('01-refused')
    expect((await providers()).total).toBe(0)
  })

  it('marks the mapping row the API refuses, and a removed row is not sent', async () => {
    await page.getByLabel('Issuer URL').fill(ISSUER)
    await page.getByLabel('Client ID', { exact: true }).fill('palisade')
    await page.getByRole('button', { name: 'Add attribute mapping' }).click()
    await page.getByLabel('Attribute mapping 1 claim').fill('org_id')
    await page.getByLabel('Attribute mapping 1 attribute').fill('no_such_attribute')
    await page.getByRole('button', { name: 'Create identity provider' }).click()
    await page.getByRole('alert').filter({ hasText: 'attribute_mappings[0].attribute' }).waitFor()
    await expect(
      page.getByLabel('Attribute mapping 1 attribute').getAttribute('aria-invalid'),
    ).resolves.toBe('true')
    await expect(page.getByLabel('Issuer URL').getAttribute('aria-invalid')).resolves.toBe(null)
    expect((await providers()).total).toBe(0)
    await page.getByRole('button', { name: 'Remove attribute mapping 1' }).click()
    await expect(page.getByLabel('Attribute mapping 1 claim').count()).resolves.toBe(0)
  })

  it('creates a provider with every field and lists it', async () => {
    await page.getByLabel('Name', { exact: true }).fill('acme')
    await page.getByLabel('Issuer URL').fill(ISSUER)
    await page.getByLabel('Client ID', { exact: true }).fill('palisade')
    await page.getByLabel('Client secret', { exact: true }).fill(SECRET)
    await page.getByLabel(/^Audiences/).fill('palisade, account')
    await page.getByLabel(/^Username claim/).fill('email')
    await page.getByRole('button', { name: 'Add attribute mapping' }).click()
    await page.getByLabel('Attribute mapping 1 claim').fill('org_id')
    await page.getByLabel('Attribute mapping 1 attribute').fill('tenant')
    await page.getByRole('button', { name: 'Add role mapping' }).click()
    await page.getByLabel('Role mapping 1 claim value').fill('data-analysts')
    await page.getByLabel('Role mapping 1 role').selectOption({ label: 'analysts' })
    await page.getByLabel('Admin claim name').fill('groups')
    await page.getByLabel('Admin claim value').fill('palisade-admins')
    await page.getByLabel(/just-in-time/).check()
    await page.getByLabel(/Console sign-in \(needs the admin claim\)/).check()
    await page.getByRole('button', { name: 'Create identity provider' }).click()
    await page.getByRole('heading', { name: 'Identity provider acme' }).waitFor()
    await shot('02-created')

    const { data } = await providers()
    expect(data).toHaveLength(1)
    const stored = data[0]
    providerId = stored?.id ?? ''
    expect(stored).toMatchObject({
      name: 'acme',
      issuer: ISSUER,
      client_id: 'palisade',
      client_secret_set: true,
      audiences: ['palisade', 'account'],
      username_claim: 'email',
      role_claim: 'groups',
      attribute_mappings: [{ claim: 'org_id', attribute: 'tenant' }],
      role_mappings: [{ value: 'data-analysts', role_id: analystsId }],
      jit_users: true,
      is_active: true,
      console_sign_in: true,
      admin_claim: { claim: 'groups', value: 'palisade-admins' },
    })

    await goTo('Identity providers')
    const row = page.locator('tbody tr').filter({ hasText: 'acme' })
    await row.waitFor()
    await expect(row.locator('td').allTextContents()).resolves.toEqual([
      'acme',
      ISSUER,
      'on',
      'yes',
      'yes',
    ])
  })

  it('never shows the secret back, in the page or from the API', async () => {
    await page.getByRole('link', { name: 'acme' }).click()
    await page.getByRole('heading', { name: 'Identity provider acme' }).waitFor()
    await page.getByText('set; leave blank to keep it').waitFor()
    await expect(page.getByLabel('Client secret', { exact: true }).inputValue()).resolves.toBe('')
    expect(await page.content()).not.toContain(SECRET)
    // The browser's own session, as the console calls the API.
    const one = await page.request.get(`${base}/api/v1/identity-providers/${providerId}`)
    const list = await page.request.get(`${base}/api/v1/identity-providers`)
    for (const answer of [one, list]) {
      expect(answer.status()).toBe(200)
      const body = await answer.text()
      expect(body).not.toContain(SECRET)
      expect(body).not.toContain('"client_secret"')
      expect(body).toContain('"client_secret_set":true')
    }
  })

  it('edits a mapping without sending the untouched secret', async () => {
    await page.getByLabel('Attribute mapping 1 claim').fill('organization')
    const [put] = await Promise.all([
      page.waitForRequest(
        (r) => r.method() === 'PUT' && r.url().endsWith(`/identity-providers/${providerId}`),
      ),
      page.getByRole('button', { name: 'Save identity provider' }).click(),
    ])
    const sent = put.postDataJSON() as Record<string, unknown>
    expect(sent).not.toHaveProperty('client_secret')
    await expect
      .poll(async () => (await server.store.identityProviders.get(providerId)).attribute_mappings)
      .toEqual([{ claim: 'organization', attribute: 'tenant' }])
    const stored = await server.store.identityProviders.get(providerId)
    await expect(server.store.identityProviders.clientSecretOf(providerId)).resolves.toBe(SECRET)
    expect(stored.role_mappings).toEqual([{ value: 'data-analysts', role_id: analystsId }])
    // The form is drawn again from what the API stored, still without the secret.
    await expect(page.getByLabel('Attribute mapping 1 claim').inputValue()).resolves.toBe(
      'organization',
    )
    await expect(page.getByLabel('Client secret', { exact: true }).inputValue()).resolves.toBe('')
    await shot('03-edited')
  })

  it('sends a new secret only once it is typed, and clears the field after saving', async () => {
    await page.getByLabel('Client secret', { exact: true }).fill('rotated-client-secret')
    const [put] = await Promise.all([
      page.waitForRequest(
        (r) => r.method() === 'PUT' && r.url().endsWith(`/identity-providers/${providerId}`),
      ),
      page.getByRole('button', { name: 'Save identity provider' }).click(),
    ])
    expect(put.postDataJSON()).toMatchObject({ client_secret: 'rotated-client-secret' })
    await expect
      .poll(() => server.store.identityProviders.clientSecretOf(providerId))
      .toBe('rotated-client-secret')
    await expect.poll(() => page.getByLabel('Client secret', { exact: true }).inputValue()).toBe('')
    expect(await page.content()).not.toContain('rotated-client-secret')
  })

  it('removes the stored secret when asked to', async () => {
    await page.getByLabel('Remove the stored client secret').check()
    await page.getByRole('button', { name: 'Save identity provider' }).click()
    await page.getByText('not set; needed for console sign-in').waitFor()
    await expect(server.store.identityProviders.clientSecretOf(providerId)).resolves.toBe(null)
    await expect(page.getByLabel('Remove the stored client secret').count()).resolves.toBe(0)
  })

  it("sets and removes a user's provider link on the user page", async () => {
    await goTo('Users')
    await page.getByRole('link', { name: 'dana' }).click()
    const link = page.getByTestId('identity-link')
    await expect(link.textContent()).resolves.toMatch(/Not linked/)
    await page.getByLabel('Provider', { exact: true }).selectOption({ label: 'acme' })
    await page.getByLabel(/^Subject/).fill('dana-subject-1')
    await page.getByRole('button', { name: 'Save link' }).click()
    await page.getByText('as subject dana-subject-1').waitFor()
    await expect(link.textContent()).resolves.toMatch(/Linked to acme as subject dana-subject-1/)
    await expect(server.store.identityProviders.links.get(danaId)).resolves.toMatchObject({
      identity_provider_id: providerId,
      subject: 'dana-subject-1',
    })
    await shot('04-linked')
    await page.getByRole('button', { name: 'Remove link' }).click()
    await page.getByText(/Not linked/).waitFor()
    await expect(server.store.identityProviders.links.get(danaId)).rejects.toThrow()
  })

  it('deletes the provider after asking', async () => {
    await goTo('Identity providers')
    await page.getByRole('link', { name: 'acme' }).click()
    const asked: string[] = []
    page.once('dialog', (dialog) => {
      asked.push(dialog.message())
      void dialog.accept()
    })
    await page.getByRole('button', { name: 'Delete identity provider' }).click()
    await page.getByText('No identity providers yet.').waitFor()
    expect(asked[0]).toMatch(/Delete identity provider acme\?/)
    expect((await providers()).total).toBe(0)
  })

  it('pages through a long list of providers', async () => {
    for (let i = 0; i < 21; i++) {
      const n = String(i).padStart(2, '0')
      await server.store.identityProviders.create(
        { name: `idp${n}`, issuer: `https://idp${n}.example.com`, client_id: 'palisade' },
        rootId,
      )
    }
    await page.reload()
    await page.getByText(/Page 1 of 2 \(21 in all\)/).waitFor()
    await page.getByRole('button', { name: 'Next' }).click()
    await page.getByText(/Page 2 of 2/).waitFor()
    await expect(page.locator('tbody tr td:first-child').allTextContents()).resolves.toEqual([
      'idp20',
    ])
    expect(problems).toEqual([])
  })
})
