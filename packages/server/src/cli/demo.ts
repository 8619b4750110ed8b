import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createServer, type PalisadeServer } from '../create-server.js'
import type { Logger } from '../logging/logger.js'
import type { LoginThrottleConfig } from '../logins/login-throttle.js'
import { DEMO_USERS, seedDemo } from './demo-shop.js'
import { closeOnSignals } from './signals.js'

/** Options of {@link startDemo}; ports 0 pick free ones (tests). */
export interface DemoOptions {
  host?: string
  dataPort?: number
  adminPort?: number
  logger?: Logger
  /** Close cleanly on SIGINT/SIGTERM and exit (the CLI). */
  handleSignals?: boolean
  /** Failed-login throttle settings (default: the server's defaults). */
  loginThrottle?: Partial<LoginThrottleConfig>
}

/** A running demo. */
export interface Demo {
  readonly server: PalisadeServer
  /** The datasource (database name) clients connect to. */
  readonly database: string
  readonly admin: { readonly username: string; readonly password: string }
  readonly users: readonly { username: string; password: string; tenant: string }[]
  /** The psql and curl lines to try, ready to print. */
  readonly instructions: string
  /** Stops Palisade and removes the temporary data directory. */
  close(): Promise<void>
}

const ADMIN = { username: 'admin', password: 'Admin-demo-1' }
const USER_PASSWORD = 'Demo-pass-1'

/**
 * Starts the one-command demo: a store on embedded PGlite in a temporary directory, an embedded
 * PGlite upstream seeded with a two-tenant shop, an admin and two users (alice: acme, bob:
 * globex) under a tenant row filter, an email mask and an ssn deny.
 *
 * ```ts
 * const demo = await startDemo()
 * console.log(demo.instructions)
 * ```
 */
export async function startDemo(options: DemoOptions = {}): Promise<Demo> {
  const dataDir = await mkdtemp(join(tmpdir(), 'palisade-demo-'))
  const host = options.host ?? '127.0.0.1'
  let server: PalisadeServer
  try {
    server = await createServer({
      dataDir,
      initialAdmin: ADMIN,
      dataPlane: { host, port: options.dataPort ?? 5434 },
      admin: { host, port: options.adminPort ?? 5435 },
      logger: options.logger,
      loginThrottle: options.loginThrottle,
    })
  } catch (error) {
    await rm(dataDir, { recursive: true, force: true })
    throw error
  }
  try {
    const admin = await server.store.users.findByUsername(ADMIN.username)
    if (!admin) throw new Error('the demo admin was not created')
    await seedDemo(server.store, admin.id, USER_PASSWORD)
  } catch (error) {
    await server.close()
    await rm(dataDir, { recursive: true, force: true })
    throw error
  }
  const users = DEMO_USERS.map((u) => ({ ...u, password: USER_PASSWORD }))
  const demo: Demo = {
    server,
    database: 'shop',
    admin: ADMIN,
    users,
    instructions: instructions(server, users),
    async close() {
      await server.close()
      await rm(dataDir, { recursive: true, force: true })
    },
  }
  if (options.handleSignals) closeOnSignals(() => demo.close(), server.logger)
  return demo
}

function instructions(
  server: PalisadeServer,
  users: readonly { username: string; password: string; tenant: string }[],
): string {
  const { host, port } = server.dataPlane
  const api = `${server.admin.url}/api/v1`
  const login = JSON.stringify(ADMIN)
  return [
    'Palisade demo is running. Data plane: psql; admin API: curl or the web console.',
    '',
    `# Web console: open ${server.admin.url}/ui and sign in as ${ADMIN.username} / ${ADMIN.password}`,
    '',
    ...users.flatMap((u) => [
      `# ${u.username} (tenant ${u.tenant}) sees only ${u.tenant} rows, masked emails, no ssn:`,
      `psql "postgresql://${u.username}:${encodeURIComponent(u.password)}@${host}:${port}/shop" -c "SELECT * FROM customers"`,
      '',
    ]),
    '# Admin: log in, then list the query audit:',
    `TOKEN=$(curl -s -X POST ${api}/auth/login -H 'Content-Type: application/json' -d '${login}' | sed -E 's/.*"token":"([^"]+)".*/\\1/')`,
    `curl -s "${api}/audit/queries?limit=5" -H "Authorization: Bearer $TOKEN"`,
    '',
    'Press Ctrl-C to stop (the demo data is temporary).',
  ].join('\n')
}
