import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto'
import type { ScramCredentials } from '../data-plane/backend.js'
import { parseAttributes } from '../upstream/scram-client.js'
import { WireError, WireSqlState } from '../wire/wire-error.js'
import { violation, type WireReader } from '../wire/wire-reader.js'
import { authenticationSaslContinue, authenticationSaslFinal } from './backend-messages.js'

/** FATAL 28P01, identical for a wrong password and an unknown or inactive user. */
export function authFailed(username: string): WireError {
  return WireError.fatal(
    WireSqlState.InvalidPassword,
    `password authentication failed for user "${username}"`,
  )
}

/**
 * The server side of one SCRAM-SHA-256 exchange (RFC 5802/7677), without channel binding.
 * Unknown users get the same exchange with the backend's deterministic fake verifier, so the
 * salt and timing do not reveal whether a user exists.
 */
export class ScramServer {
  readonly #username: string
  readonly #credentials: () => Promise<ScramCredentials>
  #state: 'initial' | 'continue' | 'done' = 'initial'
  #clientFirstBare = ''
  #serverFirst = ''
  #nonce = ''
  #gs2 = ''
  #creds: ScramCredentials | undefined

  constructor(username: string, credentials: () => Promise<ScramCredentials>) {
    this.#username = username
    this.#credentials = credentials
  }

  /** Whether the next message carries the client's proof (the step that checks the password). */
  get awaitingProof(): boolean {
    return this.#state === 'continue'
  }

  /** Why no password can match (unknown or inactive user), once the first step has run. */
  get refusal(): ScramCredentials['refusal'] {
    return this.#creds?.refusal ?? null
  }

  /** Handles one SASL message ('p'); returns the reply, or null once authenticated. */
  async step(reader: WireReader): Promise<{ reply: Buffer; done: boolean }> {
    if (this.#state === 'initial') return { reply: await this.#first(reader), done: false }
    if (this.#state === 'continue') return { reply: this.#final(reader), done: true }
    throw violation('unexpected authentication message')
  }

  async #first(reader: WireReader): Promise<Buffer> {
    const mechanism = reader.cstring()
    const length = reader.int32()
    if (mechanism !== 'SCRAM-SHA-256') {
      throw WireError.fatal(
        WireSqlState.ProtocolViolation,
        'client selected an invalid SASL authentication mechanism',
      )
    }
    const message = reader.bytes(Math.max(0, length)).toString('utf8')
    // gs2-header: "n,," (no binding) or "y,," (client supports it, server does not offer it).
    const match = /^([ny]),(?:a=[^,]*)?,(.*)$/.exec(message)
    if (!match) throw violation('malformed SCRAM client-first-message')
    this.#gs2 = message.slice(0, message.length - (match[2] ?? '').length)
    this.#clientFirstBare = match[2] ?? ''
    const clientNonce = parseAttributes(this.#clientFirstBare).get('r')
    if (!clientNonce) throw violation('malformed SCRAM client-first-message')
    this.#creds = await this.#credentials()
    this.#nonce = clientNonce + randomBytes(18).toString('base64')
    this.#serverFirst = `r=${this.#nonce},s=${this.#creds.salt},i=${this.#creds.iterations}`
    this.#state = 'continue'
    return authenticationSaslContinue(this.#serverFirst)
  }

  #final(reader: WireReader): Buffer {
    this.#state = 'done'
    const message = reader.rest().toString('utf8')
    const proofAt = message.lastIndexOf(',p=')
    if (proofAt < 0) throw violation('malformed SCRAM client-final-message')
    const withoutProof = message.slice(0, proofAt)
    const attrs = parseAttributes(withoutProof)
    const creds = this.#creds
    if (
      !creds ||
      attrs.get('r') !== this.#nonce ||
      attrs.get('c') !== Buffer.from(this.#gs2).toString('base64')
    ) {
      throw authFailed(this.#username)
    }
    const proof = Buffer.from(message.slice(proofAt + 3), 'base64')
    const authMessage = `${this.#clientFirstBare},${this.#serverFirst},${withoutProof}`
    const storedKey = Buffer.from(creds.storedKey, 'base64')
    const signature = createHmac('sha256', storedKey).update(authMessage).digest()
    if (proof.length !== signature.length) throw authFailed(this.#username)
    const clientKey = Buffer.from(proof.map((b, i) => b ^ (signature[i] ?? 0)))
    const computed = createHash('sha256').update(clientKey).digest()
    const ok = computed.length === storedKey.length && timingSafeEqual(computed, storedKey)
    if (!ok || !creds.exists) throw authFailed(this.#username)
    const serverKey = Buffer.from(creds.serverKey, 'base64')
    const serverSignature = createHmac('sha256', serverKey).update(authMessage).digest('base64')
    return authenticationSaslFinal(`v=${serverSignature}`)
  }
}
