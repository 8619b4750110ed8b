import { toJsonSchema } from '@valibot/to-json-schema'
import type * as v from 'valibot'
import type { RouteSpec } from './route-table.js'

type Json = Record<string, unknown>

/** Valibot to JSON Schema 2020-12 (OpenAPI 3.1); `check` steps have no JSON form and are skipped. */
function jsonSchema(schema: v.GenericSchema): Json {
  return toJsonSchema(schema, { target: 'draft-2020-12', errorMode: 'ignore' }) as Json
}

function isOptional(schema: v.GenericSchema): boolean {
  return schema.type === 'optional' || schema.type === 'nullish'
}

function parameters(
  location: 'path' | 'query',
  schema: { entries: Record<string, v.GenericSchema> } | undefined,
): Json[] {
  if (!schema) return []
  return Object.entries(schema.entries).map(([name, entry]) => {
    const { $schema: _drop, ...rest } = jsonSchema(entry)
    return { name, in: location, required: location === 'path' || !isOptional(entry), schema: rest }
  })
}

const ERROR_REF = { $ref: '#/components/responses/Error' }

/** The success answer's media type and schema; a route without a schema stays untyped JSON. */
function answerContent(route: RouteSpec): Json {
  if (route.media) {
    // NDJSON: each line's schema as `itemSchema` (OpenAPI 3.2's sequential media types).
    return Object.fromEntries(
      Object.entries(route.media).map(([type, { schema, lines }]) => {
        const { $schema: _drop, ...json } = jsonSchema(schema)
        return [type, lines ? { schema: { type: 'string' }, itemSchema: json } : { schema: json }]
      }),
    )
  }
  if (!route.response) return { 'application/json': { schema: { type: ['object', 'array'] } } }
  const { $schema: _drop, ...schema } = jsonSchema(route.response)
  // The Prometheus exposition is the one answer that is not JSON.
  const type = route.path === '/metrics' ? 'text/plain' : 'application/json'
  return { [type]: { schema } }
}

function operation(route: RouteSpec): Json {
  const op: Json = {
    operationId: `${route.method.toLowerCase()}${route.path.replace(/[^A-Za-z0-9]+(.)?/g, (_m, ch: string | undefined) => (ch ? ch.toUpperCase() : ''))}`,
    summary: route.summary,
    tags: [route.tag],
    parameters: [...parameters('path', route.params), ...parameters('query', route.query)],
    responses: {
      [String(route.status)]: {
        description: route.status === 204 ? 'No content' : 'Success',
        ...(route.status === 204 ? {} : { content: answerContent(route) }),
      },
      default: ERROR_REF,
    },
  }
  if (route.auth === 'none') op['security'] = []
  // Self-service routes also take a user's own username and password (only admins get tokens).
  if (route.path.startsWith('/access-requests')) {
    op['security'] = [{ bearerAuth: [] }, { basicAuth: [] }]
  }
  if (route.body) {
    const { $schema: _drop, ...schema } = jsonSchema(route.body)
    op['requestBody'] = {
      required: !route.bodyOptional,
      content: { 'application/json': { schema } },
    }
  }
  return op
}

/**
 * Builds the OpenAPI 3.1 document from the route table itself: every registered route and the
 * valibot schemas that validate it, so the document cannot drift from the implementation.
 */
export function buildOpenApi(
  routes: readonly (RouteSpec & { fullPath: string })[],
  version: string,
): Json {
  const paths: Record<string, Json> = {}
  for (const route of routes) {
    const item = paths[route.fullPath] ?? {}
    item[route.method.toLowerCase()] = operation(route)
    paths[route.fullPath] = item
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Palisade admin API',
      version,
      description: 'Admin plane of Palisade. See docs/admin-api.md for the full contract.',
    },
    servers: [{ url: '/' }],
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
        basicAuth: { type: 'http', scheme: 'basic' },
      },
      schemas: {
        Error: {
          type: 'object',
          required: ['error'],
          properties: {
            error: {
              type: 'object',
              required: ['code', 'message'],
              properties: {
                code: { type: 'string' },
                message: { type: 'string' },
                details: {
                  type: 'array',
                  items: {
                    type: 'object',
                    required: ['field', 'code', 'message'],
                    properties: {
                      field: { type: 'string' },
                      code: { type: 'string' },
                      message: { type: 'string' },
                    },
                  },
                },
              },
            },
          },
        },
      },
      responses: {
        Error: {
          description: 'Error envelope (docs/admin-api.md#errors)',
          content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } },
        },
      },
    },
  }
}
