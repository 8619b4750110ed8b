import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'
import type { Hono } from 'hono'
import { parse as parseYaml } from 'yaml'

// ajv-formats is CommonJS: its function is the default export under Node, or the module itself.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
  addFormatsModule) as unknown as (ajv: Ajv2020) => void

type Json = Record<string, any>

/** What the document says of a route whose answer has no schema yet. */
const UNTYPED = JSON.stringify({ type: ['object', 'array'] })

/**
 * Checks one success answer against the OpenAPI document; returns the problems, if any. `body`
 * is the parsed JSON, or the text of an answer in another media type (`contentType`).
 */
export type AnswerCheck = (
  method: string,
  url: string,
  status: number,
  body: unknown,
  contentType?: string,
) => string[]

/** A route of the document: its path as a pattern, with literal paths tried first. */
interface DocRoute {
  pattern: RegExp
  params: number
  item: Json
}

/**
 * Reads the app's own OpenAPI document and returns a checker of real answers against it: the
 * answer schema of the route and status the request met, validated with Ajv (JSON Schema
 * 2020-12, formats included). Routes whose answer has no schema are reported by the caller.
 */
export async function answerChecker(app: Hono<any>): Promise<AnswerCheck> {
  const doc = (await (await app.request('/api/v1/openapi.json')).json()) as Json
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  addFormats(ajv)
  const routes: DocRoute[] = Object.entries(doc['paths'] as Json)
    .map(([path, item]) => ({
      pattern: new RegExp(
        `^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}/?$`,
      ),
      params: (path.match(/\{/g) ?? []).length,
      item: item as Json,
    }))
    .sort((a, b) => a.params - b.params)
  const compiled = new Map<object, ReturnType<typeof ajv.compile>>()
  const check = (schema: Json, value: unknown, where: string): string[] => {
    let validate = compiled.get(schema)
    if (!validate) {
      validate = ajv.compile(schema)
      compiled.set(schema, validate)
    }
    if (validate(value)) return []
    return (validate.errors ?? []).map(
      (e) => `${where}: ${e.instancePath || '(answer)'} ${e.message} ${JSON.stringify(e.params)}`,
    )
  }
  return (method, url, status, body, contentType = 'application/json') => {
    const path = new URL(url, 'http://answer.check').pathname
    const route = routes.find((r) => r.pattern.test(path))
    const operation = route?.item[method.toLowerCase()] as Json | undefined
    const content = operation?.['responses']?.[String(status)]?.['content'] as Json | undefined
    if (!content)
      return status === 204 || !operation
        ? []
        : [`${method} ${path} ${status}: not in the document`]
    const type = contentType.split(';')[0]?.trim() ?? ''
    const media = (content[type] ?? content['application/json'] ?? content['text/plain']) as
      | Json
      | undefined
    const where = `${method} ${path} ${status}`
    if (!media) return [`${where}: answered ${type}, which the document does not list`]
    const schema = media['schema'] as Json
    // An untyped answer (openapi-answers.test.ts lists those routes) has nothing to check yet.
    if (JSON.stringify(schema) === UNTYPED) return []
    if (media['itemSchema']) {
      const lines = String(body)
        .split('\n')
        .filter((line) => line !== '')
      return lines.flatMap((line, i) =>
        check(media['itemSchema'] as Json, JSON.parse(line), `${where} line ${i + 1}`),
      )
    }
    return check(schema, type === 'application/yaml' ? parseYaml(String(body)) : body, where)
  }
}
