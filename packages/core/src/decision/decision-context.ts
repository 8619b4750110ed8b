import type {
  AttributeDefinition,
  SessionDatasource,
  SessionUser,
} from '../session-context.types.js'
import type { DecisionContext, DecisionUser, QueryFacts } from './decision.types.js'

const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday']

/** Keys a custom attribute can never take in `ctx.session.user` (docs/resources.md#attribute-definitions). */
const BUILT_IN_KEYS = new Set(['id', 'username', 'roles', 'user_id'])

/**
 * Builds the `ctx` a decision function receives (docs/decision-functions.md#the-context-ctx): the user's built-ins and one key
 * per attribute definition (own value, else the default, typed, else null), the evaluation
 * time in UTC, the datasource, and `query` only when query facts are given. Nothing else about
 * the user is exposed.
 */
export function buildDecisionContext(input: {
  user: SessionUser
  datasource: SessionDatasource
  attributeDefinitions: readonly AttributeDefinition[]
  now: Date
  query?: QueryFacts
}): DecisionContext {
  const { user, datasource, now, query } = input
  const session: DecisionContext['session'] = {
    user: userOf(user, input.attributeDefinitions),
    time: {
      now: now.toISOString(),
      hour: now.getUTCHours(),
      day_of_week: DAYS[now.getUTCDay()] ?? 'Sunday',
    },
    datasource: { name: datasource.name, access_mode: datasource.accessMode },
  }
  return query ? { session, query: copyFacts(query) } : { session }
}

function userOf(user: SessionUser, definitions: readonly AttributeDefinition[]): DecisionUser {
  const out: DecisionUser = { id: user.id, username: user.username, roles: [...user.roles] }
  for (const definition of definitions) {
    if (BUILT_IN_KEYS.has(definition.key)) continue
    const own = Object.hasOwn(user.attributes, definition.key)
      ? user.attributes[definition.key]
      : undefined
    // Same rule as `{user.<key>}` templates: a missing or null value takes the default.
    const value = own !== undefined && own !== null ? own : definition.defaultValue
    // defineProperty, so a key such as "__proto__" stays an ordinary own property.
    Object.defineProperty(out, definition.key, {
      value: typed(value, definition.valueType),
      enumerable: true,
      writable: true,
      configurable: true,
    })
  }
  return out
}

/** Coerces a stored value or default to its definition's type; anything unusable is null. */
function typed(value: unknown, valueType: AttributeDefinition['valueType']): unknown {
  if (value === undefined || value === null) return null
  switch (valueType) {
    case 'integer': {
      const text =
        typeof value === 'number' || typeof value === 'string' ? String(value).trim() : ''
      return /^-?\d+$/.test(text) && Number.isSafeInteger(Number(text)) ? Number(text) : null
    }
    case 'boolean':
      if (value === true || value === 'true') return true
      if (value === false || value === 'false') return false
      return null
    case 'list': {
      const items = typeof value === 'string' ? parseJson(value) : value
      return Array.isArray(items) ? items.map(listItem) : null
    }
    default:
      return typeof value === 'string' ? value : JSON.stringify(value)
  }
}

function listItem(item: unknown): string | number | boolean | null {
  if (item === null || typeof item === 'string' || typeof item === 'boolean') return item
  if (typeof item === 'number') return Number.isFinite(item) ? item : null
  return String(item)
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

function copyFacts(query: QueryFacts): QueryFacts {
  return {
    tables: query.tables.map((t) => ({
      datasource: t.datasource,
      schema: t.schema,
      table: t.table,
    })),
    columns: [...query.columns],
    join_count: query.join_count,
    has_aggregation: query.has_aggregation,
    has_subquery: query.has_subquery,
    has_where: query.has_where,
    statement_type: query.statement_type,
  }
}
