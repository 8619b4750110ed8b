import { WireWriter } from '../wire/wire-writer.js'

/** Transaction status byte of ReadyForQuery: idle, in a transaction block, or in a failed one. */
export type TransactionStatus = 'I' | 'T' | 'E'

/** ReadyForQuery ('Z'). */
export function readyForQuery(status: TransactionStatus): Buffer {
  return new WireWriter(1).string(status).message('Z')
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
  return new WireWriter(0).message('I')
}

/** ParseComplete ('1'). */
export function parseComplete(): Buffer {
  return new WireWriter(0).message('1')
}

/** CloseComplete ('3'). */
export function closeComplete(): Buffer {
  return new WireWriter(0).message('3')
}

/** AuthenticationOk. */
export function authenticationOk(): Buffer {
  return new WireWriter(4).int32(0).message('R')
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
