import { join } from 'node:path'
import pg from 'pg'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { PalisadeServer } from '../../src/index.js'
import { PASSWORD, type SeededShop, seedShop } from '../fixtures/seed-store.js'
import { SHOP_SQL } from '../fixtures/shop.js'
import {
  artifactDir,
  CHROMIUM,
  goToSection,
  launch,
  NO_BROWSER,
  openPage,
  startConsoleServer,
} from './browser.js'

if (!CHROMIUM) console.warn(NO_BROWSER)

/** Every page state (loading, empty, error, forbidden), the tools pages and the keyboard. */
describe.skipIf(!CHROMIUM)('web console pages in Chromium', () => {
  let server: PalisadeServer
  let seeded: SeededShop
  let browser: Browser
  let page: Page
  let base: string
  const problems: string[] = []
  const shots = artifactDir('pages')
  const shot = (name: string) =>
    page.screenshot({ path: join(shots, `${name}.png`), fullPage: true })
  const goTo = (section: string) => goToSection(page, section)

  beforeAll(async () => {
    server = await startConsoleServer()
    base = server.admin.url
    seeded = await seedShop(server.store, { ds_type: 'pglite', config: { init_sql: SHOP_SQL } })
    // The console's own admin, so the seeded one can demote it at the end.
    await server.store.users.create(
      { username: 'console-admin', password: PASSWORD, is_admin: true },
      seeded.admin.id,
    )
    for (let i = 0; i < 22; i++) {
      const n = String(i).padStart(2, '0')
      await server.store.users.create({ username: `bulk${n}`, password: PASSWORD }, seeded.admin.id)
    }
    browser = await launch()
    page = await openPage(browser, problems)
  })
  afterAll(async () => {
    await browser?.close()
    await server?.close()
  })

  it('signs in with the keyboard alone and moves focus to each page it opens', async () => {
    await page.goto(`${base}/ui`)
    await page.getByLabel('Username').focus()
    await page.keyboard.type('console-admin')
    await page.keyboard.press('Tab')
    await page.keyboard.type(PASSWORD)
    await page.keyboard.press('Enter')
    await page.getByRole('heading', { name: 'Overview' }).waitFor()
    await page
      .getByRole('navigation', { name: 'Sections' })
      .getByRole('link', { name: 'Roles' })
      .focus()
    await page.keyboard.press('Enter')
    await page.getByRole('heading', { name: 'Roles', exact: true }).waitFor()
    // The console moves focus to the page's heading just after it renders: wait for that.
    await expect
      .poll(() =>
        page.evaluate('[document.activeElement?.tagName, document.activeElement?.textContent]'),
      )
      .toEqual(['H1', 'Roles'])
  })

  it('shows loading while a list is on its way, then the empty state', async () => {
    await page.route('**/api/v1/decision-functions?*', async (route) => {
      await new Promise((r) => setTimeout(r, 700))
      await route.continue()
    })
    await goTo('Decision functions')
    await page.getByRole('status').filter({ hasText: 'Loading' }).waitFor()
    await shot('loading')
    await page.getByText('No decision functions yet.').waitFor()
    await page.unroute('**/api/v1/decision-functions?*')
  })

  it("shows the API's message for a missing resource", async () => {
    // Only the part after # changes: the page stays, and so does its in-memory token.
    await page.goto(`${base}/ui#/users/0190f000-0000-7000-8000-00000000dead`)
    const alert = page.getByRole('alert')
    await alert.waitFor()
    expect(await alert.textContent()).toMatch(/Error 404: user not found/)
    await shot('error')
  })

  it('pages through a long list', async () => {
    await goTo('Users')
    await page.getByText(/Page 1 of 2 \(27 in all\)/).waitFor()
    await page.getByRole('button', { name: 'Next' }).click()
    await page.getByText(/Page 2 of 2/).waitFor()
    await page.getByRole('link', { name: 'bulk21' }).waitFor()
    await expect(page.getByRole('link', { name: 'alice' }).count()).resolves.toBe(0)
    await page.getByLabel('Search users').fill('bulk0')
    await page
      .getByText(/Page 1 of 1|bulk09/)
      .first()
      .waitFor()
    await expect(page.locator('tbody tr').count()).resolves.toBe(10)
  })

  it("sets a user's row limit and shows the effective limits with the role's", async () => {
    const user = await server.store.users.findByUsername('bulk05')
    const role = await server.store.roles.create(
      { name: 'limited-readers', limits: { max_concurrent_statements: 2 } },
      seeded.admin.id,
    )
    await server.store.roles.addMembers(role.id, { user_ids: [user?.id ?? ''] }, seeded.admin.id)
    await page.goto(`${base}/ui#/users/${user?.id}`)
    await page.getByRole('heading', { name: 'Limits' }).waitFor()
    await page.getByLabel('Rows per statement').fill('500')
    await page.getByLabel('Past the row limit').selectOption('truncate')
    await page.getByRole('button', { name: 'Save limits' }).click()
    await page
      .getByText(
        "Effective, with the roles': rows per statement 500 (truncate), statements per minute none, concurrent statements 2.",
      )
      .waitFor()
    expect((await server.store.users.get(user?.id ?? '')).limits).toEqual({
      max_rows_per_statement: 500,
      on_row_limit: 'truncate',
    })
    await page.getByLabel('Rows per statement').fill('0')
    await page.getByRole('button', { name: 'Save limits' }).click()
    await page.getByRole('alert').filter({ hasText: 'limits.max_rows_per_statement' }).waitFor()
    await shot('user-limits')
  })

  it('tests a decision function in the sandbox: fire, fuel, time and logs', async () => {
    await goTo('Decision functions')
    await page.getByRole('link', { name: 'New decision function' }).click()
    await page.getByLabel('Name').fill('exempt-auditors')
    const source = page.getByLabel(/^Source/)
    await source.fill(
      "function evaluate(ctx, config) {\n  console.log('user', ctx.session.user.username)\n  return { fire: !ctx.session.user.roles.includes(config.exempt_role) }\n}",
    )
    await page.getByRole('button', { name: 'Run test' }).click()
    const result = page.getByTestId('test-result')
    await result.waitFor()
    const text = (await result.textContent()) ?? ''
    expect(text).toContain('fire: true')
    expect(text).toMatch(/Fuel [\d,]+, time \d+ µs/)
    expect(text).toContain('user alice')
    await source.fill('function evaluate(ctx) { while (true) {} }')
    await page.getByRole('button', { name: 'Run test' }).click()
    await result.filter({ hasText: 'Failed' }).waitFor()
    await shot('decision-test')
    await source.fill('function evaluate( {')
    await page.getByRole('button', { name: 'Create function' }).click()
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(/Error 422/)
  })

  it('shows a version conflict as such when someone else saved the policy first', async () => {
    await goTo('Policies')
    await page.getByRole('link', { name: 'email-mask' }).click()
    await page.getByRole('heading', { name: 'Policy email-mask' }).waitFor()
    const policy = seeded.policies.mask
    await server.store.policies.update(
      policy.id,
      { version: policy.version, description: 'changed elsewhere' },
      seeded.admin.id,
    )
    await page.getByLabel('Description').fill('my change')
    await page.getByRole('button', { name: 'Save policy' }).click()
    const alert = page.getByRole('alert')
    await alert.waitFor()
    expect(await alert.textContent()).toMatch(/Version conflict/)
    await shot('version-conflict')
    await page.getByRole('button', { name: 'Reload policy' }).click()
    await expect.poll(() => page.getByLabel('Description').inputValue()).toBe('changed elsewhere')
  })

  it('previews a statement as alice: her masked rows, and her refusal as her client sees it', async () => {
    await goTo('Preview as user')
    await page.getByLabel('As user').selectOption({ label: 'alice' })
    await page.getByLabel('SQL').fill('SELECT id, email FROM customers ORDER BY id')
    await page.getByRole('button', { name: 'Preview' }).click()
    const result = page.getByRole('region', { name: 'Preview result' })
    await result.getByRole('heading', { name: 'Allowed' }).waitFor()
    const cells = await result.locator('tbody td').allTextContents()
    expect(cells.length).toBeGreaterThan(0)
    expect(cells.filter((c) => c.includes('@'))).toEqual([])
    expect(cells).toContain('***')
    await shot('preview')
    await page.getByLabel('SQL').fill('SELECT ssn FROM customers')
    await page.getByRole('button', { name: 'Preview' }).click()
    await result.getByRole('heading', { name: 'Refused' }).waitFor()
    expect(await result.getByRole('alert').first().textContent()).toMatch(
      /ERROR 42501: permission denied/,
    )
  })

  it('simulates a column deny over what alice ran and lists the statement it would refuse', async () => {
    const alice = new pg.Client({
      host: '127.0.0.1',
      port: server.dataPlane.port,
      user: 'alice',
      password: PASSWORD,
      database: 'shop',
    })
    await alice.connect()
    await alice.query('SELECT id, name FROM customers ORDER BY id')
    await alice.end()
    await server.store.audit.queries.flush()
    await goTo('What-if')
    await page.getByLabel('Proposed change (JSON)').fill(
      JSON.stringify({
        create_policies: [
          {
            ref: 'no-name',
            name: 'no-name',
            policy_type: 'column_deny',
            targets: [{ schemas: ['public'], tables: ['customers'], columns: ['name'] }],
          },
        ],
        assign: [{ policy_ref: 'no-name', scope: 'all' }],
      }),
    )
    await page.getByRole('button', { name: 'Simulate' }).click()
    const result = page.getByRole('region', { name: 'Simulation result' })
    await result.waitFor({ timeout: 30_000 })
    const row = result.locator('tr', { hasText: 'SELECT id, name FROM customers' })
    expect(await row.textContent()).toMatch(/newly refused/)
    await shot('simulation')
    expect(await server.store.policies.list({ search: 'no-name' })).toMatchObject({ total: 0 })
  })

  it('switches a policy to shadow mode and shows what it would have done', async () => {
    await goTo('Policies')
    await page.getByRole('link', { name: 'secrets-hide' }).click()
    await page.getByLabel('Enforcement').selectOption('shadow')
    await page.getByRole('button', { name: 'Save policy' }).click()
    await page.getByRole('heading', { name: 'Shadow report (last 7 days)' }).waitFor()
    const alice = new pg.Client({
      host: '127.0.0.1',
      port: server.dataPlane.port,
      user: 'alice',
      password: PASSWORD,
      database: 'shop',
    })
    await alice.connect()
    // Not applied: alice reads the table the shadow deny would hide.
    expect((await alice.query('SELECT value FROM secrets')).rows).toEqual([{ value: 'the recipe' }])
    await alice.end()
    await server.store.audit.queries.flush()
    await page.reload()
    // A reload keeps the session (docs/console.md#signing-in): open the policy again.
    await page.getByText('Signed in as').waitFor()
    await goTo('Policies')
    await page.getByRole('link', { name: 'secrets-hide' }).click()
    await page
      .getByText(/Matched 1 statement of 1 user; enforcing it would have refused 1\./)
      .waitFor()
    await shot('shadow-report')
  })

  it('creates an aggregation policy through the form: group size and allowed aggregates', async () => {
    await goTo('Policies')
    await page.getByRole('link', { name: 'New policy' }).click()
    await page.getByLabel('Name').fill('order-totals')
    await page.getByLabel('Policy type').selectOption('aggregation')
    await page.getByLabel('Target 1 schemas').fill('public')
    await page.getByLabel('Target 1 tables').fill('orders')
    // No columns for an aggregation policy; a group size of 1 is refused with the field named.
    expect(await page.getByLabel('Target 1 columns').count()).toBe(0)
    await page.getByLabel('Minimum group size').fill('1')
    await page.getByLabel('max', { exact: true }).check()
    await page.getByRole('button', { name: 'Create policy' }).click()
    const refusal = page.getByRole('alert')
    await refusal.waitFor()
    expect(await refusal.textContent()).toMatch(/min_group_size/)
    await page.getByLabel('Minimum group size').fill('5')
    await page.getByRole('button', { name: 'Create policy' }).click()
    await page.getByRole('heading', { name: 'Policy order-totals' }).waitFor()
    expect(await page.getByLabel('Minimum group size').inputValue()).toBe('5')
    expect(await page.getByLabel('max', { exact: true }).isChecked()).toBe(true)
    expect(await page.getByLabel('min', { exact: true }).isChecked()).toBe(false)
    await shot('aggregation-policy')
    const [saved] = (await server.store.policies.list({ search: 'order-totals' })).data
    expect(saved).toMatchObject({
      policy_type: 'aggregation',
      min_group_size: 5,
      allowed_aggregates: ['max'],
    })
  })

  it('lists a pending access request and approves it for less time than asked', async () => {
    const role = await server.store.roles.create({ name: 'oncall' }, seeded.admin.id)
    const asked = await fetch(`${base}/api/v1/access-requests`, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Authorization: `Basic ${Buffer.from(`carol:${PASSWORD}`).toString('base64')}`,
      },
      body: JSON.stringify({ role_id: role.id, duration_seconds: 8 * 3600, reason: 'INC-4711' }),
    })
    expect(asked.status).toBe(201)
    await goTo('Access requests')
    const row = page.locator('tr', { hasText: 'INC-4711' })
    await row.waitFor()
    expect(await row.textContent()).toContain('8 h')
    await page.getByLabel('Hours to grant carol (blank: as requested)').fill('2')
    await page.getByRole('button', { name: 'Approve carol' }).click()
    await page.getByText('No pending requests.').waitFor()
    const detail = await server.store.roles.get(role.id)
    const until = Date.parse(detail.members[0]?.valid_until ?? '')
    expect(until - Date.now()).toBeGreaterThan(7100_000)
    expect(until - Date.now()).toBeLessThanOrEqual(7200_000)
    await goTo('Roles')
    await page.getByRole('link', { name: 'oncall' }).click()
    await page.getByText(/carol until/).waitFor()
    await shot('access-request-approved')
  })

  it('classifies the shop, accepts a proposed tag and shows it', async () => {
    await goTo('Datasources')
    await page.getByRole('link', { name: 'shop', exact: true }).click()
    await page.getByRole('button', { name: 'Classify now' }).click()
    const accept = page.getByRole('button', { name: 'Accept pii.email on email' })
    await accept.waitFor()
    expect(await page.getByRole('button', { name: 'Accept pii.ssn on ssn' }).count()).toBe(1)
    await accept.click()
    await page.getByRole('listitem').filter({ hasText: 'public.customers.email:' }).waitFor()
    const tags = await server.store.catalogTags.list(seeded.datasourceId)
    expect(tags).toEqual([
      { schema_name: 'public', table_name: 'customers', column_name: 'email', tags: ['pii.email'] },
    ])
    await shot('tags')
  })

  it('says "forbidden" when the account stops being an admin, and signs out', async () => {
    const me = await server.store.users.findByUsername('console-admin')
    await server.store.users.update(me?.id as string, { is_admin: false }, seeded.admin.id)
    await goTo('Roles')
    const alert = page.getByRole('alert')
    await alert.waitFor()
    expect(await alert.textContent()).toMatch(/Forbidden/)
    await shot('forbidden')
    await page.getByRole('button', { name: 'Sign out' }).click()
    await page.getByRole('heading', { name: 'Palisade console' }).waitFor()
    expect(problems).toEqual([])
  })
})
