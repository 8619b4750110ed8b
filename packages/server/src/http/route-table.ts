import type { Context, Hono } from 'hono'
import type * as v from 'valibot'
import { ApiError } from './api-error.js'
import { checkParameterText, parseJsonBody, readRawBody } from './body.js'
import type { AdminDeps, AdminEnv } from './env.js'
import { toHonoPath } from './paths.js'
import { validateBody, validateParameters } from './validation.js'

/** HTTP methods the admin API uses. */
export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

type ObjectSchema = v.ObjectSchema<v.ObjectEntries, v.ErrorMessage<v.ObjectIssue> | undefined>

/** What a handler receives: validated parameters, the validated body and the acting admin. */
export interface RouteInput<P, Q, B> {
  c: Context<AdminEnv>
  deps: AdminDeps
  params: P
  query: Q
  body: B
  /** The admin from the token; `''` on routes without authentication. */
  actorId: string
}

/**
 * One admin route: the same schemas validate requests and generate the OpenAPI document, so
 * the two cannot drift apart.
 */
export interface RouteSpec<
  P extends ObjectSchema = ObjectSchema,
  Q extends ObjectSchema = ObjectSchema,
  B extends v.GenericSchema = v.GenericSchema,
> {
  method: Method
  /** OpenAPI-style path relative to the mount point, e.g. `/users/{id}`. */
  path: string
  summary: string
  tag: string
  /** `none` (public), `user` (any valid token) or `admin` (the default). */
  auth?: 'none' | 'user' | 'admin'
  /** Success status, for the OpenAPI document. */
  status: number
  /**
   * The success answer's shape, for the OpenAPI document (none for a 204): a schema whose output
   * type is checked against the store's own type where it has one (http/answers/).
   */
  response?: v.GenericSchema
  /**
   * Success answers in other media types, by content type (a YAML bundle, NDJSON and CSV
   * exports); `lines`: the schema is that of each line (NDJSON).
   */
  media?: Readonly<Record<string, { schema: v.GenericSchema; lines?: boolean }>>
  params?: P
  query?: Q
  body?: B
  /**
   * Leave the body schema to the store, for routes whose contract puts a route check before
   * the schema step (assignments: 400 scope_mismatch before 422). The schema still documents it.
   */
  storeValidatesBody?: boolean
  /** The body may be left out (read as `{}`): for actions whose fields are all optional. */
  bodyOptional?: boolean
  /** Step 6: throws 404 when the resource named in the path is missing. */
  exists?: (deps: AdminDeps, params: v.InferOutput<P>) => Promise<unknown>
  handler: (
    input: RouteInput<v.InferOutput<P>, v.InferOutput<Q>, v.InferOutput<B>>,
  ) => Promise<Response> | Response
}

/** Keeps a route's schema types attached to its handler while storing it untyped. */
export function defineRoute<
  P extends ObjectSchema,
  Q extends ObjectSchema,
  B extends v.GenericSchema,
>(spec: RouteSpec<P, Q, B>): RouteSpec {
  return spec as unknown as RouteSpec
}

/** Runs steps 3-7 of the docs/admin-api.md#errors check order, then the handler (step 8). */
async function run(spec: RouteSpec, deps: AdminDeps, c: Context<AdminEnv>): Promise<Response> {
  const raw = await readRawBody(c.req.raw)
  checkParameterText(c.req.param())
  checkParameterText(c.req.query())
  const params = spec.params ? validateParameters(spec.params, c.req.param()) : {}
  const query = spec.query ? validateParameters(spec.query, c.req.query()) : {}
  const json = spec.body
    ? (parseJsonBody(raw, !spec.bodyOptional) ?? (spec.bodyOptional ? {} : undefined))
    : undefined
  if (spec.exists) await spec.exists(deps, params)
  if (spec.body && !spec.storeValidatesBody) validateBody(spec.body, json)
  // The handler gets the JSON as sent, not valibot's output: the store needs the fields this
  // schema drops (a `password` in a user update is a 422 not_allowed, docs/resources.md#users).
  const body = json
  const actorId = spec.auth === 'none' ? '' : c.get('user').id
  return spec.handler({ c, deps, params, query, body, actorId })
}

/** Literal segments sort before `{param}` ones, so `/policies/validate-expression` wins. */
function literalFirst(a: string, b: string): number {
  const rank = (path: string) => path.split('/').map((s) => (s.startsWith('{') ? 1 : 0))
  const ra = rank(a)
  const rb = rank(b)
  for (let i = 0; i < Math.max(ra.length, rb.length); i++) {
    const diff = (ra[i] ?? -1) - (rb[i] ?? -1)
    if (diff !== 0) return diff
  }
  return 0
}

/**
 * Registers routes grouped by path. Each path gets its methods, then a catch-all answering
 * 405 with `Allow`; Hono runs matches in registration order, so registering literal paths
 * first makes `GET /policies/validate-expression` a 405 rather than an id lookup.
 */
export function registerRoutes(
  app: Hono<AdminEnv>,
  prefix: string,
  routes: readonly RouteSpec[],
  deps: AdminDeps,
): void {
  const byPath = new Map<string, RouteSpec[]>()
  for (const route of routes) byPath.set(route.path, [...(byPath.get(route.path) ?? []), route])
  const paths = [...byPath.keys()].sort(literalFirst)
  for (const path of paths) {
    const group = byPath.get(path) ?? []
    const honoPath = `${prefix}${toHonoPath(path)}`
    for (const spec of group) app.on(spec.method, honoPath, (c) => run(spec, deps, c))
    const allow = group.map((r) => r.method).join(', ')
    app.all(honoPath, () => {
      throw new ApiError(405, 'method_not_allowed', 'method not allowed', [], { Allow: allow })
    })
  }
}
