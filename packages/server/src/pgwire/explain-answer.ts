import { type ExplainPlanRequest, explainRows, type ScrubbedError } from '@palisade/core'
import type { BackendFrame } from '../upstream/upstream.types.js'
import { errorResponse, toWireFields } from '../wire/error-response.js'
import { WireWriter } from '../wire/wire-writer.js'
import { commandComplete } from './backend-messages.js'

const T = 'T'.charCodeAt(0)
const D = 'D'.charCodeAt(0)
const C = 'C'.charCodeAt(0)
const s = 's'.charCodeAt(0)

/** The type of EXPLAIN's one column, by format, as PostgreSQL describes it. */
const TYPE_OIDS = { text: 25, yaml: 25, json: 114, xml: 142 } as const

/**
 * Turns the upstream's answer to a rewritten EXPLAIN (a JSON plan) into the answer the client
 * asked for: its RowDescription names the requested format's type, the plan's rows are held
 * until the command completes, then the redacted plan is sent in the client's format
 * (docs/rewrite.md#explain). A plan that cannot be shown safely ends in an error instead.
 */
export class ExplainAnswer {
  readonly #request: ExplainPlanRequest
  #json = ''
  #sent = false
  /** Set when the plan was refused: the request failed. */
  error: ScrubbedError | undefined

  constructor(request: ExplainPlanRequest) {
    this.#request = request
  }

  /** What to relay for `frame`: replacement bytes, or undefined to relay nothing. */
  reshape(frame: BackendFrame): Uint8Array | undefined {
    if (frame.code === T) return this.#rowDescription(frame.bytes)
    if (frame.code === D) {
      this.#json += dataRowText(frame.bytes)
      return undefined
    }
    if (frame.code === C || frame.code === s) {
      if (this.#sent) return frame.code === C ? commandComplete('EXPLAIN') : frame.bytes
      this.#sent = true
      const rows = this.#rows()
      if (!rows) return errorResponse(this.error as ScrubbedError)
      const parts = rows.map(dataRow)
      parts.push(frame.code === C ? commandComplete('EXPLAIN') : Buffer.from(frame.bytes))
      return Buffer.concat(parts)
    }
    return frame.bytes
  }

  #rows(): string[] | undefined {
    try {
      return explainRows(this.#json, this.#request)
    } catch (error) {
      const fields = toWireFields(error)
      this.error = { severity: fields.severity, code: fields.code, message: fields.message }
      return undefined
    }
  }

  /** One `QUERY PLAN` column of the format's type, in the format code the upstream used. */
  #rowDescription(upstream: Uint8Array): Buffer {
    const bytes = Buffer.from(upstream.buffer, upstream.byteOffset, upstream.byteLength)
    const formatCode = bytes.length >= 2 ? bytes.readInt16BE(bytes.length - 2) : 0
    return new WireWriter()
      .int16(1)
      .cstring('QUERY PLAN')
      .int32(0)
      .int16(0)
      .int32(TYPE_OIDS[this.#request.options.format])
      .int16(-1)
      .int32(-1)
      .int16(formatCode)
      .message('T')
  }
}

/** The one column of a DataRow as text (EXPLAIN answers one text column). */
function dataRowText(frame: Uint8Array): string {
  const bytes = Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength)
  // Code, length, column count, then the column's length and bytes.
  const length = bytes.readInt32BE(7)
  return length < 0 ? '' : bytes.toString('utf8', 11, 11 + length)
}

function dataRow(text: string): Buffer {
  const value = Buffer.from(text, 'utf8')
  return new WireWriter(value.length + 6).int16(1).int32(value.length).bytes(value).message('D')
}
