import { Readable } from 'node:stream'
import type { ReadableStream as WebReadableStream } from 'node:stream/web'

/**
 * How the CLI's client commands (`preview`, …) reach a running server's admin API: its URL
 * (`--admin-url`, `PALISADE_ADMIN_URL`, default `http://127.0.0.1:5435`) and a bearer token
 * (`PALISADE_ADMIN_TOKEN`), or an admin's username and password to sign in with
 * (`PALISADE_ADMIN_USERNAME`, `PALISADE_ADMIN_PASSWORD`).
 */
export interface AdminClient {
  /** Sends a request to `/api/v1{path}`; throws the API's error message on a non-2xx answer. */
  request<T>(method: string, path: string, body?: unknown): Promise<T>
  /** A GET whose body is streamed (exports); throws the API's error on a non-2xx answer. */
  stream(path: string): Promise<Readable>
}

export const DEFAULT_ADMIN_URL = 'http://127.0.0.1:5435'

/** The API's error envelope as one line (docs/admin-api.md#errors). */
function errorLine(status: number, text: string): string {
  try {
    const body = JSON.parse(text) as {
      error?: { code?: string; message?: string; details?: { field?: string; message?: string }[] }
    }
    const e = body.error
    if (e?.message) {
      const details = (e.details ?? []).map((d) => `${d.field ?? ''}: ${d.message ?? ''}`)
      return [`${e.message} (${status} ${e.code ?? ''})`, ...details].join('\n  ')
    }
  } catch {
    // not JSON: the text itself is the best message
  }
  return `${status} ${text.slice(0, 200)}`
}

export async function connectAdmin(
  url: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Promise<AdminClient> {
  const base = `${(url ?? env['PALISADE_ADMIN_URL'] ?? DEFAULT_ADMIN_URL).replace(/\/+$/, '')}/api/v1`
  const call = async (method: string, path: string, body: unknown, token?: string) => {
    const headers: Record<string, string> = {}
    if (token) headers['Authorization'] = `Bearer ${token}`
    if (body !== undefined) headers['Content-Type'] = 'application/json'
    let res: Response
    try {
      res = await fetch(`${base}${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      })
    } catch (error) {
      const reason = error instanceof Error ? (error.cause ?? error).toString() : String(error)
      throw new Error(`cannot reach the admin API at ${base}: ${reason}`)
    }
    if (!res.ok) throw new Error(errorLine(res.status, await res.text()))
    return res
  }
  const send = async <T>(method: string, path: string, body: unknown, token?: string) => {
    const text = await (await call(method, path, body, token)).text()
    return (text === '' ? undefined : JSON.parse(text)) as T
  }
  let token = env['PALISADE_ADMIN_TOKEN']
  if (!token) {
    const username = env['PALISADE_ADMIN_USERNAME']
    const password = env['PALISADE_ADMIN_PASSWORD']
    if (!username || !password) {
      throw new Error(
        'set PALISADE_ADMIN_TOKEN, or PALISADE_ADMIN_USERNAME and PALISADE_ADMIN_PASSWORD',
      )
    }
    token = (await send<{ token: string }>('POST', '/auth/login', { username, password })).token
  }
  const bearer = token
  return {
    request: (method, path, body) => send(method, path, body, bearer),
    async stream(path) {
      const res = await call('GET', path, undefined, bearer)
      if (!res.body) return Readable.from([])
      return Readable.fromWeb(res.body as WebReadableStream<Uint8Array>)
    },
  }
}
