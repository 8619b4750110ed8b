import { createHash, createHmac, pbkdf2, randomBytes } from 'node:crypto'
import { promisify } from 'node:util'

const pbkdf2Async = promisify(pbkdf2)

/**
 * Salted passwords by password, salt and iteration count: every new upstream connection of a
 * datasource gets the same salt from its server, so the 4096-round derivation runs once, not on
 * every connect. Bounded; the process already holds the clear-text passwords.
 */
const SALTED = new Map<string, Promise<Buffer>>()
const MAX_SALTED = 256

function saltedPassword(password: string, salt: Buffer, iterations: number): Promise<Buffer> {
  const key = `${iterations}:${salt.toString('base64')}:${createHash('sha256').update(password).digest('base64')}`
  let salted = SALTED.get(key)
  if (!salted) {
    if (SALTED.size >= MAX_SALTED) SALTED.delete(SALTED.keys().next().value as string)
    // Runs on libuv's thread pool: the event loop serves clients meanwhile.
    salted = pbkdf2Async(password, salt, iterations, 32, 'sha256')
    salted.catch(() => SALTED.delete(key))
    SALTED.set(key, salted)
  }
  return salted
}

/** A SCRAM-SHA-256 client exchange without channel binding (RFC 5802, RFC 7677). */
export class ScramClient {
  readonly #nonce = randomBytes(18).toString('base64')
  readonly #password: string
  #serverSignature = ''

  constructor(password: string) {
    this.#password = password
  }

  /** The client-first-message (with its `n,,` GS2 header). */
  first(): string {
    return `n,,n=*,r=${this.#nonce}`
  }

  /** The client-final-message for the server-first-message. */
  async final(serverFirst: string): Promise<string> {
    const attrs = parseAttributes(serverFirst)
    const nonce = attrs.get('r') ?? ''
    const salt = Buffer.from(attrs.get('s') ?? '', 'base64')
    const iterations = Number(attrs.get('i'))
    if (!nonce.startsWith(this.#nonce) || nonce.length === this.#nonce.length) {
      throw new Error('SCRAM: invalid server nonce')
    }
    if (!Number.isInteger(iterations) || iterations < 1 || iterations > 1_000_000) {
      throw new Error('SCRAM: invalid iteration count')
    }
    const withoutProof = `c=biws,r=${nonce}`
    const authMessage = `n=*,r=${this.#nonce},${serverFirst},${withoutProof}`
    const salted = await saltedPassword(this.#password, salt, iterations)
    const clientKey = hmac(salted, 'Client Key')
    const storedKey = createHash('sha256').update(clientKey).digest()
    const signature = hmac(storedKey, authMessage)
    const proof = Buffer.from(clientKey.map((b, i) => b ^ (signature[i] ?? 0)))
    this.#serverSignature = hmac(hmac(salted, 'Server Key'), authMessage).toString('base64')
    return `${withoutProof},p=${proof.toString('base64')}`
  }

  /** Checks the server-final-message's signature. */
  verify(serverFinal: string): void {
    if (parseAttributes(serverFinal).get('v') !== this.#serverSignature) {
      throw new Error('SCRAM: server signature does not match')
    }
  }
}

function hmac(key: Buffer, data: string): Buffer {
  return createHmac('sha256', key).update(data).digest()
}

/** Parses `a=1,b=2` attribute lists of SCRAM messages. */
export function parseAttributes(text: string): Map<string, string> {
  const out = new Map<string, string>()
  for (const part of text.split(',')) {
    const eq = part.indexOf('=')
    if (eq > 0) out.set(part.slice(0, eq), part.slice(eq + 1))
  }
  return out
}
