import * as v from 'valibot'
import { buildOpenApi } from '../openapi.js'
import { defineRoute, type RouteSpec } from '../route-table.js'

/**
 * `GET /openapi.json` (no auth). The document is built once, lazily, from the table it is
 * given; it includes itself so the completeness test covers every route.
 */
export function openApiRoute(table: () => readonly (RouteSpec & { fullPath: string })[]) {
  let doc: Record<string, unknown> | undefined
  return defineRoute({
    method: 'GET',
    path: '/openapi.json',
    summary: 'This OpenAPI 3.1 document',
    tag: 'openapi',
    auth: 'none',
    status: 200,
    response: v.looseObject({
      openapi: v.literal('3.1.0'),
      info: v.looseObject({ title: v.string(), version: v.string() }),
      paths: v.record(v.string(), v.record(v.string(), v.looseObject({}))),
    }),
    handler({ c, deps }) {
      doc ??= buildOpenApi(table(), deps.version)
      return c.json(doc)
    },
  })
}
