import { isPalisadeError, type ScrubbedError } from '@palisade/core'
import { WireError, type WireErrorFields, WireSqlState } from './wire-error.js'
import { WireWriter } from './wire-writer.js'

/**
 * Encodes an ErrorResponse ('E') or NoticeResponse ('N') with the S, V, C, M, D and H fields only:
 * position, internal query and context would describe the rewritten SQL, not the client's.
 * @see https://www.postgresql.org/docs/current/protocol-error-fields.html
 */
export function errorResponse(
  fields: WireErrorFields | ScrubbedError,
  code: 'E' | 'N' = 'E',
): Buffer {
  const w = new WireWriter()
  w.string('S').cstring(fields.severity)
  w.string('V').cstring(fields.severity)
  w.string('C').cstring(fields.code)
  w.string('M').cstring(fields.message)
  if (fields.detail !== undefined) w.string('D').cstring(fields.detail)
  if (fields.hint !== undefined) w.string('H').cstring(fields.hint)
  return w.string('\0').message(code)
}

/** Maps anything thrown while handling a statement to the fields the client sees. */
export function toWireFields(error: unknown): WireErrorFields {
  if (error instanceof WireError) return error.fields
  if (isPalisadeError(error)) {
    return {
      severity: error.severity,
      code: error.code,
      message: error.message,
      detail: error.detail,
      hint: error.hint,
    }
  }
  // Never leak an internal message (it may quote SQL or policy text).
  return { severity: 'ERROR', code: WireSqlState.InternalError, message: 'internal error' }
}
