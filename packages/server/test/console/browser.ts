import { existsSync, mkdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type Browser, chromium, type Page } from 'playwright-core'
import { createLogger, createServer, type PalisadeServer } from '../../src/index.js'

/** Debian's Chromium (`apt-get install chromium`), or the one `PALISADE_TEST_CHROMIUM` names. */
export const CHROMIUM = [process.env['PALISADE_TEST_CHROMIUM'], '/usr/bin/chromium']
  .filter((p): p is string => !!p)
  .find((p) => existsSync(p))

/** Why the browser suites skip, printed once so a green run without them is not mistaken. */
export const NO_BROWSER =
  'console end-to-end tests skipped: no Chromium (install Debian package `chromium` or set PALISADE_TEST_CHROMIUM)'

/** Screenshots land here (git-ignored), one folder per suite. */
export function artifactDir(suite: string): string {
  const dir = join(
    dirname(fileURLToPath(import.meta.url)),
    '..',
    '..',
    'test-artifacts',
    'console',
    suite,
  )
  mkdirSync(dir, { recursive: true })
  return dir
}

export async function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    // Containers run tests as root, where Chromium's sandbox cannot start.
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  })
}

/** A page that fails the test on any script error or console error the console logs. */
export async function openPage(browser: Browser, problems: string[]): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`))
  page.on('console', (m) => {
    // A failed API call is logged by the browser as a resource error; the page shows those itself.
    if (m.type() === 'error' && !m.text().includes('Failed to load resource')) {
      problems.push(`console error: ${m.text()}`)
    }
  })
  page.setDefaultTimeout(15_000)
  return page
}

export async function signIn(page: Page, baseUrl: string, username: string, password: string) {
  await page.goto(`${baseUrl}/ui`)
  await page.getByLabel('Username').fill(username)
  await page.getByLabel('Password').fill(password)
  await page.getByRole('button', { name: 'Sign in' }).click()
}

/** A server on free ports with test-only keys and a silent log, as every console suite runs. */
export function startConsoleServer(): Promise<PalisadeServer> {
  return createServer({
    secretKey: 'console-tests-only-key-console-tests',
    jwtSecret: 'console-tests-only-secret-console-tests',
    dataPlane: { port: 0 },
    admin: { port: 0 },
    logger: createLogger({ level: 'silent' }),
  })
}

/** Follows a link of the console's side menu. */
export function goToSection(page: Page, section: string): Promise<void> {
  return page
    .getByRole('navigation', { name: 'Sections' })
    .getByRole('link', { name: section })
    .click()
}
