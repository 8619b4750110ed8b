import {
  type AstNode,
  boolConst,
  nullConst,
  numberConst,
  stringConst,
  typeCast,
} from '../ast/node.js'
import { AccessRulesError } from '../errors.js'
import type { AttributeDefinition, SessionUser } from '../session-context.types.js'

/** A template variable's value as literal AST nodes: one scalar, or the elements of a list. */
export type TemplateValue =
  | { readonly kind: 'scalar'; readonly node: AstNode }
  | { readonly kind: 'list'; readonly nodes: readonly AstNode[] }

/**
 * Resolves `{user.<key>}` for one user (docs/policies.md#template-variables): built-ins first, then the user's own value,
 * then the definition's default, else NULL. A key with no definition is an error, never ''.
 * Values become typed literal nodes, so quotes or SQL in a value stay one literal.
 */
export function resolveTemplateValue(
  key: string,
  user: SessionUser,
  definitions: ReadonlyMap<string, AttributeDefinition>,
): TemplateValue {
  if (key === 'id' || key === 'user_id') return scalar(stringConst(user.id))
  if (key === 'username') return scalar(stringConst(user.username))
  if (key === 'roles') return { kind: 'list', nodes: user.roles.map(stringConst) }
  const definition = definitions.get(key)
  if (!definition) {
    throw new AccessRulesError(`template variable {user.${key}} has no attribute definition`)
  }
  const own = Object.hasOwn(user.attributes, key) ? user.attributes[key] : undefined
  const value = own !== undefined && own !== null ? own : definition.defaultValue
  if (value === undefined || value === null) {
    return definition.valueType === 'list' ? { kind: 'list', nodes: [] } : scalar(nullConst())
  }
  return toLiteral(key, definition, value)
}

function scalar(node: AstNode): TemplateValue {
  return { kind: 'scalar', node }
}

function toLiteral(key: string, definition: AttributeDefinition, value: unknown): TemplateValue {
  switch (definition.valueType) {
    case 'integer': {
      const text = String(value).trim()
      if (!/^-?\d+$/.test(text)) throw invalid(key, definition)
      return scalar(numberConst(text))
    }
    case 'boolean': {
      if (value === true || value === 'true') return scalar(boolConst(true))
      if (value === false || value === 'false') return scalar(boolConst(false))
      throw invalid(key, definition)
    }
    case 'list': {
      const items = typeof value === 'string' ? parseListString(value) : value
      if (!Array.isArray(items)) throw invalid(key, definition)
      return { kind: 'list', nodes: items.map((item) => stringConst(String(item))) }
    }
    default:
      return scalar(stringConst(typeof value === 'string' ? value : JSON.stringify(value)))
  }
}

function parseListString(value: string): unknown {
  try {
    return JSON.parse(value)
  } catch {
    return undefined
  }
}

function invalid(key: string, definition: AttributeDefinition): AccessRulesError {
  return new AccessRulesError(
    `attribute "${key}" does not hold a valid ${definition.valueType} value`,
  )
}

/** A list used where one value is expected becomes a `text[]` array literal. */
export function listAsArray(nodes: readonly AstNode[]): AstNode {
  if (nodes.length === 0) return typeCast(stringConst('{}'), 'text', true)
  return typeCast({ A_ArrayExpr: { elements: [...nodes] } }, 'text', true)
}
