import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto'

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
  final(serverFirst: string): string {
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
    const salted = pbkdf2Sync(this.#password, salt, iterations, 32, 'sha256')
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
