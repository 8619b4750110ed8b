import { join } from 'node:path'
import pg from 'pg'
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

const INIT_SQL = `
CREATE TABLE orders (id int PRIMARY KEY, tenant text NOT NULL, amount int NOT NULL);
INSERT INTO orders VALUES (1, 'acme', 10), (2, 'globex', 20), (3, 'acme', 30), (4, 'initech', 40);
CREATE TABLE control (id int);
`

if (!CHROMIUM) console.warn(NO_BROWSER)

/**
 * The console in a real browser against a real server: an admin builds a role, a user, a row
 * filter (first with a syntax error), its assignment and the catalog, all by clicking; the user
 * then queries through the data plane and the admin finds that statement, rewritten, in the audit.
 */
describe.skipIf(!CHROMIUM)('web console, end to end in Chromium', () => {
  let server: PalisadeServer
  let browser: Browser
  let page: Page
  let base: string
  let shopId: string
  const problems: string[] = []
  const shots = artifactDir('walkthrough')
  const goTo = (section: string) => goToSection(page, section)
  const shot = (name: string) =>
    page.screenshot({ path: join(shots, `${name}.png`), fullPage: true })

  beforeAll(async () => {
    server = await startConsoleServer()
    base = server.admin.url
    const admin = await server.store.users.create(
      { username: 'root', password: PASSWORD, is_admin: true },
      SYSTEM_ACTOR,
    )
    await server.store.users.create({ username: 'viewer', password: PASSWORD }, admin.id)
    const shop = await server.store.datasources.create(
      { name: 'shop', ds_type: 'pglite', access_mode: 'open', config: { init_sql: INIT_SQL } },
      admin.id,
    )
    shopId = shop.id
    browser = await launch()
    page = await openPage(browser, problems)
  })
  afterAll(async () => {
    await browser?.close()
    await server?.close()
  })

  it('refuses a wrong password and a non-admin with the API message, and signs an admin in', async () => {
    await signIn(page, base, 'root', 'Wrong-pass-1')
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(/invalid|credentials/i)
    await signIn(page, base, 'viewer', PASSWORD)
    const forbidden = await page.getByRole('alert').textContent()
    expect(forbidden).toMatch(/not an admin/i)
    await shot('01-forbidden')
    await signIn(page, base, 'root', PASSWORD)
    await page.getByText('Signed in as').waitFor()
    await page.getByRole('heading', { name: 'Overview' }).waitFor()
    await shot('02-overview')
  })

  it('discovers the catalog with progress and saves a selection', async () => {
    await goTo('Datasources')
    await page.getByRole('link', { name: 'shop' }).click()
    await page.getByRole('button', { name: 'Discover schemas' }).click()
    await page.getByLabel('public').check()
    await page.getByRole('button', { name: 'Discover tables' }).click()
    await page.getByLabel('public.orders (table)').check()
    await page.getByRole('button', { name: 'Save selection' }).click()
    // The stored selection now lists the table with its columns, read back from the API.
    await page.locator('.tree').getByText('tenant').waitFor()
    await expect(page.locator('.tree').textContent()).resolves.not.toContain('control')
    await shot('03-catalog')
  })

  it('creates an attribute, a role and a user in that role with a tenant', async () => {
    await goTo('Attributes')
    await page.getByLabel('Key').fill('tenant')
    await page.getByRole('button', { name: 'Create attribute' }).click()
    await page.getByRole('button', { name: 'Edit tenant' }).waitFor()

    await goTo('Roles')
    await page.getByLabel('Role name').fill('analysts')
    await page.getByRole('button', { name: 'Create role' }).click()
    await page.getByRole('heading', { name: 'Role analysts' }).waitFor()

    await goTo('Users')
    await page.getByLabel('Username').fill('dana')
    await page.getByLabel('Password').fill(PASSWORD)
    await page.getByRole('button', { name: 'Create user' }).click()
    await page.getByRole('heading', { name: 'User dana' }).waitFor()
    await page.getByLabel('Tenant (tenant, string)').fill('acme')
    await page.getByRole('button', { name: 'Save attributes' }).click()
    await page.getByLabel('Add to role').selectOption({ label: 'analysts' })
    await page.getByRole('button', { name: 'Add', exact: true }).click()
    await page.getByRole('button', { name: 'Remove from analysts' }).waitFor()
    await shot('04-user')
    const dana = await server.store.users.findByUsername('dana')
    expect(dana?.attributes).toEqual({ tenant: 'acme' })
  })

  it('shows the 422 of a row filter with a syntax error, then saves and assigns the fixed one', async () => {
    await goTo('Policies')
    await page.getByRole('link', { name: 'New policy' }).click()
    await page.getByLabel('Name').fill('tenant-rows')
    await page.getByLabel('Target 1 schemas').fill('public')
    await page.getByLabel('Target 1 tables').fill('orders')
    const expression = page.getByLabel(/Filter expression/)
    await expression.fill('tenant = = {user.tenant}')
    // Live validation answers while typing, before any save.
    await page.getByTestId('expression-status').filter({ hasText: 'Does not parse' }).waitFor()
    await page.getByRole('button', { name: 'Create policy' }).click()
    const refusal = page.getByRole('alert')
    await refusal.waitFor()
    const message = (await refusal.textContent()) ?? ''
    expect(message).toMatch(/Error 422/)
    expect(message).toMatch(/syntax error|parse/i)
    await shot('05-policy-422')
    expect(await server.store.policies.list({ search: 'tenant-rows' })).toMatchObject({ total: 0 })

    await expression.fill('tenant = {user.tenant}')
    await page
      .getByTestId('expression-status')
      .filter({ hasText: 'Parses. Uses {user.tenant}' })
      .waitFor()
    await page.getByRole('button', { name: 'Create policy' }).click()
    await page.getByRole('heading', { name: 'Policy tenant-rows' }).waitFor()

    await page.getByLabel('Scope').selectOption('role')
    await page.getByLabel('Role').selectOption({ label: 'analysts' })
    await page.getByRole('button', { name: 'Assign' }).click()
    await page.getByRole('cell', { name: 'role analysts' }).waitFor()
    await shot('06-policy-assigned')
  })

  it("grants the role access; the user's query is filtered and found in the audit, rewritten", async () => {
    await goTo('Datasources')
    await page.getByRole('link', { name: 'shop' }).click()
    const grant = page.getByRole('group', { name: 'Roles' }).getByLabel('analysts')
    await grant.check()
    await page.getByText('Saving…').waitFor({ state: 'detached' })
    expect((await server.store.access.get(shopId)).roles.map((r) => r.name)).toEqual(['analysts'])

    const client = new pg.Client({
      host: '127.0.0.1',
      port: server.dataPlane.port,
      user: 'dana',
      password: PASSWORD,
      database: 'shop',
    })
    await client.connect()
    const { rows } = await client.query('SELECT id, tenant FROM orders ORDER BY id')
    await client.end()
    expect(rows).toEqual([
      { id: 1, tenant: 'acme' },
      { id: 3, tenant: 'acme' },
    ])
    await server.store.audit.queries.flush()

    await goTo('Query audit')
    await page.getByLabel('User').selectOption({ label: 'dana' })
    await page.getByRole('button', { name: /SELECT id, tenant FROM orders/ }).click()
    const rewritten = (await page.getByTestId('rewritten-sql').textContent()) ?? ''
    expect(rewritten).toContain("'acme'")
    expect(rewritten).toMatch(/tenant/)
    await expect(page.getByTestId('original-sql').textContent()).resolves.toBe(
      'SELECT id, tenant FROM orders ORDER BY id',
    )
    await page.getByRole('cell', { name: 'tenant-rows' }).waitFor()
    await shot('07-audit-rewritten')
  })

  it('charts the statement on the overview and lists the admin changes with their diffs', async () => {
    await goTo('Overview')
    const chart = page.getByRole('img', { name: /Statements per hour/ })
    await expect(chart.getAttribute('aria-label')).resolves.toMatch(/1 succeeded/)
    await goTo('Admin audit')
    await page.getByLabel('Resource').selectOption('policy')
    await page.getByRole('button', { name: 'Show changes' }).first().click()
    await page.locator('table.diff').getByText('filter_expression').waitFor()
    await shot('08-admin-audit')
    expect(problems).toEqual([])
  })
})
