import { readFile } from 'node:fs/promises'
import type { Context, Hono } from 'hono'
import type { AdminEnv } from './env.js'

/** Where the built console lives: beside the bundle in dist, or in dist when running from src. */
const ASSET_DIRS = ['./console/', '../../dist/console/']

interface Assets {
  js: string
  css: string
}

let loading: Promise<Assets | null> | undefined

/** The built files, read once; a miss is retried (a build may land while the server runs). */
async function assets(): Promise<Assets | null> {
  loading ??= loadAssets()
  const found = await loading
  if (!found) loading = undefined
  return found
}

async function loadAssets(): Promise<Assets | null> {
  for (const dir of ASSET_DIRS) {
    try {
      const base = new URL(dir, import.meta.url)
      const [js, css] = await Promise.all([
        readFile(new URL('app.js', base), 'utf8'),
        readFile(new URL('app.css', base), 'utf8'),
      ])
      return { js, css }
    } catch {}
  }
  return null
}

/**
 * Nothing but this origin's script, style and API: the console needs no inline code, no external
 * network and no framing, so a stored string that reached the page could not run or exfiltrate.
 */
const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Palisade console</title>
<link rel="stylesheet" href="/ui/app.css">
</head>
<body>
<div id="app"><noscript>The Palisade console needs JavaScript.</noscript></div>
<script type="module" src="/ui/app.js"></script>
</body>
</html>
`

function send(c: Context<AdminEnv>, body: string, type: string, status: 200 | 503 = 200) {
  c.header('Content-Type', type)
  c.header('Content-Security-Policy', CONTENT_SECURITY_POLICY)
  c.header('X-Frame-Options', 'DENY')
  c.header('Referrer-Policy', 'no-referrer')
  return c.body(body, status)
}

/**
 * Serves the web console (docs/console.md) at `/ui`: one page, one script, one stylesheet. The
 * console signs in through the admin API like any client; these routes hand out static files
 * only, so they need no token.
 */
export function mountConsole(app: Hono<AdminEnv>): void {
  app.get('/', (c) => c.redirect('/ui', 302))
  app.get('/ui', async (c) => {
    if (!(await assets())) {
      return send(c, 'The console is not built: run the build first.\n', 'text/plain', 503)
    }
    return send(c, PAGE, 'text/html; charset=utf-8')
  })
  for (const [file, type] of [
    ['app.js', 'text/javascript; charset=utf-8'],
    ['app.css', 'text/css; charset=utf-8'],
  ] as const) {
    app.get(`/ui/${file}`, async (c) => {
      const found = await assets()
      if (!found) return send(c, 'not built\n', 'text/plain', 503)
      return send(c, file === 'app.js' ? found.js : found.css, type)
    })
  }
}
