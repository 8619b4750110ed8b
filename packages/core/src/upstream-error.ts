import { writtenNames } from './analyze/written-names.js'
import type { CompiledSession } from './session/compiled-session.js'
import { quotesValue } from './upstream-value-redaction.js'

/** The fields of a PostgreSQL ErrorResponse, as pg, pg-protocol and PGlite name them. */
export interface UpstreamErrorFields {
  severity?: string | undefined
  code?: string | undefined
  message: string
  detail?: string | undefined
  hint?: string | undefined
  position?: string | undefined
  internalPosition?: string | undefined
  internalQuery?: string | undefined
  where?: string | undefined
  schema?: string | undefined
  table?: string | undefined
  column?: string | undefined
  dataType?: string | undefined
  constraint?: string | undefined
}

/** What may be relayed to the client. */
export interface ScrubbedError {
  severity: string
  code: string
  message: string
  detail?: string
  hint?: string
}

/** The generic text that replaces an upstream message that would reveal something hidden. */
export const REDACTED_UPSTREAM_MESSAGE = 'query could not be executed'

/**
 * Prepares an upstream error for the client. Position, internal query and context describe the
 * rewritten text, and the object fields name upstream objects: all are dropped. A message,
 * detail or hint that names a hidden table, a denied column or a policy expression the user did
 * not write is redacted, so errors never reveal what a policy hides (docs/errors.md). In a
 * session with projection policies, so is one that may quote a value the statement read
 * (upstream-value-redaction.ts): a constrained column may filter, never show.
 */
export function scrubUpstreamError(
  fields: UpstreamErrorFields,
  context: { session?: CompiledSession | undefined; originalSql?: string | undefined } = {},
): ScrubbedError {
  const secrets = context.session ? sensitiveTerms(context.session, context.originalSql ?? '') : []
  const originalSql = context.originalSql ?? ''
  const values = context.session?.mayProject === true
  const reveals = (text: string | undefined) =>
    text !== undefined &&
    (secrets.some((term) => text.includes(term)) || (values && quotesValue(text, originalSql)))
  const out: ScrubbedError = {
    severity: fields.severity ?? 'ERROR',
    code: fields.code ?? 'XX000',
    message: reveals(fields.message) ? REDACTED_UPSTREAM_MESSAGE : fields.message,
  }
  if (fields.detail !== undefined && !reveals(fields.detail)) out.detail = fields.detail
  if (fields.hint !== undefined && !reveals(fields.hint)) out.hint = fields.hint
  return out
}

/** Names and expressions this session must not learn, minus what the user wrote themselves. */
function sensitiveTerms(session: CompiledSession, originalSql: string): string[] {
  const terms = new Set<string>()
  for (const schema of session.schemas.values()) {
    if (schema.visible !== schema.upstream) terms.add(`${schema.upstream}.`)
    // Without a policy that can hide, nothing is hidden or denied, and only the tables this
    // session has read (built) can have put a policy's text in what went upstream.
    const entries = session.mayHide ? schema.tables.values() : schema.tables.built()
    for (const entry of entries) {
      if (!entry.plan) terms.add(`"${entry.exposed.name}"`)
      else for (const column of entry.plan.denied) terms.add(`"${column}"`)
      for (const list of Object.values(entry.policies)) {
        for (const runtime of list as { filter?: { text: string }; mask?: { text: string } }[]) {
          if (runtime.filter) terms.add(runtime.filter.text)
          if (runtime.mask) terms.add(runtime.mask.text)
        }
      }
    }
  }
  // The keyed-hash mask key (never the user's to know, even if they typed it).
  const key = session.datasource.maskKey
  const lowerSql = originalSql.toLowerCase()
  // Names as PostgreSQL read them too: `U&"\0073sn"` is a name the user wrote, and a denied
  // column must fail exactly like a missing one however it is spelled.
  let names: ReadonlySet<string> | undefined
  const unknown = [...terms].filter((term) => {
    const bare = term.replace(/^"|"$/g, '').replace(/\.$/, '')
    if (bare.length === 0 || lowerSql.includes(bare.toLowerCase())) return false
    names ??= writtenNames(originalSql)
    return !names.has(bare)
  })
  return key ? [...unknown, key] : unknown
}
