import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createAdminApp } from '../../src/http/index.js'
import { JWT_SECRET, setup, type TestContext } from './helpers.js'

let ctx: TestContext
beforeAll(async () => {
  ctx = await setup()
})
afterAll(() => ctx.close())

/** The console's files as the admin port serves them, without a browser (docs/console.md). */
describe('web console assets', () => {
  it('serves the page, its script and its stylesheet without a token, under a strict policy', async () => {
    const page = await ctx.app.request('/ui')
    expect(page.status).toBe(200)
    expect(page.headers.get('content-type')).toContain('text/html')
    const html = await page.text()
    expect(html).toContain('<script type="module" src="/ui/app.js"></script>')
    const csp = page.headers.get('content-security-policy') ?? ''
    expect(csp).toContain("script-src 'self'")
    expect(csp).toContain("connect-src 'self'")
    expect(csp).toContain("frame-ancestors 'none'")
    expect(csp).not.toContain('unsafe-inline')
    expect(page.headers.get('x-frame-options')).toBe('DENY')
    expect(page.headers.get('x-content-type-options')).toBe('nosniff')

    const script = await ctx.app.request('/ui/app.js')
    expect(script.status).toBe(200)
    expect(script.headers.get('content-type')).toContain('text/javascript')
    const js = await script.text()
    // The bundle talks to this origin's API and nothing else.
    expect(js).toContain('/api/v1')
    expect(js).not.toMatch(/https?:\/\/(?!www\.w3\.org)[a-z]/)
    const style = await ctx.app.request('/ui/app.css')
    expect(style.headers.get('content-type')).toContain('text/css')
  })

  it('sends the admin port root to the console and keeps the API behind its token', async () => {
    const root = await ctx.app.request('/')
    expect(root.status).toBe(302)
    expect(root.headers.get('location')).toBe('/ui')
    const api = await ctx.app.request('/api/v1/users')
    expect(api.status).toBe(401)
    expect((await ctx.app.request('/ui/other.js')).status).toBe(404)
  })

  it('is off when the embedding application says so', async () => {
    const app = createAdminApp({ store: ctx.store, jwtSecret: JWT_SECRET, console: false })
    expect((await app.request('/ui')).status).toBe(404)
    expect((await app.request('/')).status).toBe(404)
  })
})
