/**
 * The console's only way to the server: the admin REST API on the same origin. The admin token
 * lives in an HttpOnly cookie that this script cannot read (docs/console.md#signing-in); what
 * the script holds is the session's CSRF token, sent with every request that changes something.
 */

import type { User } from './types'

/** One failing field, as the API's error envelope lists it. */
export interface FieldProblem {
  field: string
  code: string
  message: string
}

/** A non-2xx answer, with the API's envelope (docs/admin-api.md, "Errors"). */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: FieldProblem[] = [],
  ) {
    super(message)
  }
}

/** A page of a top-level collection. */
export interface Page<T> {
  data: T[]
  total: number
  page: number
  page_size: number
}

let csrfToken: string | null = null
const signedOutListeners = new Set<() => void>()

/** What `POST` and `GET /auth/session` answer. */
export interface Session {
  csrf_token: string
  expires_at: string
  user: User
}

/** Keeps the CSRF token of the session just opened or found (null once signed out). */
export function setSession(session: Session | null): void {
  csrfToken = session?.csrf_token ?? null
}

/** Called when the server rejects the token (expired, revoked, user deactivated). */
export function onSignedOut(listener: () => void): () => void {
  signedOutListeners.add(listener)
  return () => signedOutListeners.delete(listener)
}

/** Builds `?a=1&b=2` from the defined, non-empty values. */
export function queryString(params: Record<string, string | number | boolean | undefined>): string {
  const pairs = Object.entries(params).filter(([, v]) => v !== undefined && v !== '')
  if (pairs.length === 0) return ''
  return `?${pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`).join('&')}`
}

/** Calls `/api/v1{path}`; resolves with the parsed body (undefined for 204), rejects with ApiFailure. */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = {}
  if (csrfToken && method !== 'GET') headers['X-CSRF-Token'] = csrfToken
  if (body !== undefined) headers['Content-Type'] = 'application/json'
  let res: Response
  try {
    res = await fetch(`/api/v1${path}`, {
      method,
      headers,
      body: body === undefined ? null : JSON.stringify(body),
      // The session cookie goes to this origin only; it is never sent cross-site.
      credentials: 'same-origin',
    })
  } catch {
    throw new ApiFailure(0, 'network_error', 'the server cannot be reached')
  }
  if (res.status === 204) return undefined as T
  const text = await res.text()
  let parsed: unknown
  try {
    parsed = text ? JSON.parse(text) : undefined
  } catch {
    parsed = undefined
  }
  if (!res.ok) {
    const envelope = (
      parsed as { error?: { code?: string; message?: string; details?: FieldProblem[] } }
    )?.error
    const failure = new ApiFailure(
      res.status,
      envelope?.code ?? 'http_error',
      envelope?.message ?? `request failed with status ${res.status}`,
      envelope?.details ?? [],
    )
    if (res.status === 401 && csrfToken !== null) {
      csrfToken = null
      for (const listener of signedOutListeners) listener()
    }
    throw failure
  }
  return parsed as T
}
