import type { Store, User } from '@palisade/store'
import type { Hono } from 'hono'
import { type AdminAppOptions, createAdminApp } from '../../src/http/index.js'
import { createTestStore } from '../fixtures/snapshots.js'
import { type AnswerCheck, answerChecker } from './answer-check.js'

/** The actor of the very first admin, before any user exists. */
export const SYSTEM_ACTOR = '00000000-0000-0000-0000-000000000000'
/** Meets the password rule of docs/resources.md#users. */
export const PASSWORD = 'Admin-Passw0rd!'
/** A 32-byte HS256 secret for tests only. */
export const JWT_SECRET = 'test-secret-test-secret-test-secret!'
/** A well-formed uuid that names nothing. */
export const MISSING_ID = '0190a0a0-0000-7000-8000-000000000000'

let counter = 0
/** A name unique within the run. */
export function unique(prefix: string): string {
  counter++
  return `${prefix}${counter}x${Math.random().toString(36).slice(2, 7)}`
}

/** One store, one app and a logged-in admin, shared by a test file. */
export interface TestContext {
  store: Store
  app: Hono<any>
  admin: User
  token: string
  logs: Record<string, unknown>[]
  /** Sends a request with the admin token and JSON body; `token: null` sends none. */
  call(
    method: string,
    path: string,
    options?: { body?: unknown; token?: string | null; headers?: Record<string, string> },
  ): Promise<Response>
  /** Like `call`, returning the status and parsed body. */
  json(
    method: string,
    path: string,
    options?: { body?: unknown; token?: string | null; headers?: Record<string, string> },
  ): Promise<{ status: number; body: any; res: Response }>
  /** Logs in and returns a token. */
  login(username: string, password?: string): Promise<string>
  close(): Promise<void>
}

/**
 * Opens a store (in-memory PGlite, or the PostgreSQL database of `databaseUrl`), seeds the admin
 * and logs in through the API.
 */
export async function setup(
  options: { databaseUrl?: string; app?: Partial<AdminAppOptions> } = {},
): Promise<TestContext> {
  const { app: appOptions, ...storeOptions } = options
  const store = await createTestStore({ secretKey: 'x'.repeat(32), ...storeOptions })
  const admin = await store.users.create(
    { username: 'admin', password: PASSWORD, is_admin: true },
    SYSTEM_ACTOR,
  )
  const logs: Record<string, unknown>[] = []
  const app = createAdminApp({
    store,
    jwtSecret: JWT_SECRET,
    version: '9.9.9',
    logger: (entry) => logs.push(entry),
    ...appOptions,
  })
  // Every success answer of the HTTP suite is checked against the OpenAPI document.
  let check: Promise<AnswerCheck> | undefined
  const checkAnswer = async (method: string, path: string, res: Response) => {
    if (res.status < 200 || res.status > 299 || res.status === 204) return
    const text = await res.clone().text()
    const json = res.headers.get('content-type')?.startsWith('application/json')
    check ??= answerChecker(app)
    const type = res.headers.get('content-type') ?? undefined
    const problems = (await check)(method, path, res.status, json ? JSON.parse(text) : text, type)
    if (problems.length > 0)
      throw new Error(`answer differs from the OpenAPI document:\n${problems.join('\n')}`)
  }
  const ctx: TestContext = {
    store,
    app,
    admin,
    token: '',
    logs,
    async call(method, path, options = {}) {
      const headers: Record<string, string> = { ...options.headers }
      const token = options.token === undefined ? ctx.token : options.token
      if (token !== null) headers['Authorization'] = `Bearer ${token}`
      let body: string | undefined
      if (options.body !== undefined) {
        body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body)
        headers['Content-Type'] ??= 'application/json'
      }
      const res = await app.request(path, { method, headers, body })
      await checkAnswer(method, path, res)
      return res
    },
    async json(method, path, options) {
      const res = await ctx.call(method, path, options)
      const text = await res.text()
      return { status: res.status, body: text === '' ? null : JSON.parse(text), res }
    },
    async login(username, password = PASSWORD) {
      const { status, body } = await ctx.json('POST', '/api/v1/auth/login', {
        body: { username, password },
        token: null,
      })
      if (status !== 200) throw new Error(`login failed: ${status} ${JSON.stringify(body)}`)
      return body.token as string
    },
    close: () => store.close(),
  }
  ctx.token = await ctx.login('admin')
  return ctx
}

/** Creates a user through the store, as the admin. */
export async function makeUser(ctx: TestContext, extra: Record<string, unknown> = {}) {
  return ctx.store.users.create(
    { username: unique('u'), password: PASSWORD, ...extra },
    ctx.admin.id,
  )
}

/** Creates a pglite datasource through the store, as the admin. */
export async function makeDatasource(ctx: TestContext) {
  return ctx.store.datasources.create(
    { name: unique('ds'), ds_type: 'pglite', config: {} },
    ctx.admin.id,
  )
}
