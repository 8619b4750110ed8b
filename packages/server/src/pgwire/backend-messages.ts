import { WireWriter } from '../wire/wire-writer.js'

/** Transaction status byte of ReadyForQuery: idle, in a transaction block, or in a failed one. */
export type TransactionStatus = 'I' | 'T' | 'E'

/**
 * Messages without fields are built once: writing never changes a buffer, and the few of them
 * are sent with nearly every answer.
 */
const READY: Record<TransactionStatus, Buffer> = {
  I: new WireWriter(1).string('I').message('Z'),
  T: new WireWriter(1).string('T').message('Z'),
  E: new WireWriter(1).string('E').message('Z'),
}
const EMPTY_QUERY_RESPONSE = new WireWriter(0).message('I')
const PARSE_COMPLETE = new WireWriter(0).message('1')
const CLOSE_COMPLETE = new WireWriter(0).message('3')

/** ReadyForQuery ('Z'). */
export function readyForQuery(status: TransactionStatus): Buffer {
  // The status comes from the upstream's own ReadyForQuery: only I, T and E are expected.
  return READY[status] ?? new WireWriter(1).string(status).message('Z')
}

/** ParameterStatus ('S'). */
export function parameterStatus(name: string, value: string): Buffer {
  return new WireWriter().cstring(name).cstring(value).message('S')
}

/** BackendKeyData ('K'): the key a CancelRequest must present. */
export function backendKeyData(processId: number, secretKey: number): Buffer {
  return new WireWriter(8).int32(processId).int32(secretKey).message('K')
}

/** CommandComplete ('C') with its tag, e.g. `SELECT 3`. */
export function commandComplete(tag: string): Buffer {
  return new WireWriter().cstring(tag).message('C')
}

/** EmptyQueryResponse ('I'). */
export function emptyQueryResponse(): Buffer {
  return EMPTY_QUERY_RESPONSE
}

/** ParseComplete ('1'). */
export function parseComplete(): Buffer {
  return PARSE_COMPLETE
}

/** CloseComplete ('3'). */
export function closeComplete(): Buffer {
  return CLOSE_COMPLETE
}

/** AuthenticationOk. */
export function authenticationOk(): Buffer {
  return new WireWriter(4).int32(0).message('R')
}

/**
 * AuthenticationCleartextPassword: asked only where token logins are on, over TLS or loopback
 * (docs/sso.md), so a client can send an identity provider's token as its password.
 */
export function authenticationCleartextPassword(): Buffer {
  return new WireWriter(4).int32(3).message('R')
}

/** AuthenticationSASL offering SCRAM-SHA-256 only (no channel binding). */
export function authenticationSasl(): Buffer {
  return new WireWriter().int32(10).cstring('SCRAM-SHA-256').cstring('').message('R')
}

/** AuthenticationSASLContinue with the server-first-message. */
export function authenticationSaslContinue(data: string): Buffer {
  return new WireWriter().int32(11).string(data).message('R')
}

/** AuthenticationSASLFinal with the server-final-message. */
export function authenticationSaslFinal(data: string): Buffer {
  return new WireWriter().int32(12).string(data).message('R')
}

/** Concatenates messages into one write. */
export function concat(parts: readonly Uint8Array[]): Buffer {
  return Buffer.concat(parts)
}
