import { createHash, createHmac, pbkdf2, randomBytes, timingSafeEqual } from 'node:crypto'
import { promisify } from 'node:util'

/** PBKDF2 on libuv's thread pool: the event loop serves other requests meanwhile. */
const pbkdf2Async = promisify(pbkdf2)

/** SCRAM-SHA-256 iteration count for new verifiers (docs/resources.md#users). */
export const SCRAM_ITERATIONS = 4096

/** The stored parts of a SCRAM-SHA-256 verifier (RFC 5802 section 3), base64 encoded. */
export interface ScramVerifier {
  salt: string
  iterations: number
  storedKey: string
  serverKey: string
}

const hmac = (key: Buffer, data: string) => createHmac('sha256', key).update(data).digest()

/**
 * Derives a verifier from a password (RFC 7677): SaltedPassword = Hi(password, salt, i),
 * StoredKey = H(HMAC(SaltedPassword, "Client Key")), ServerKey = HMAC(SaltedPassword, "Server Key").
 * The password is used as given; SASLprep of non-ASCII input is left to the client, as libpq does.
 * The key derivation runs off the event loop.
 */
export async function createScramVerifier(
  password: string,
  salt: Buffer = randomBytes(16),
  iterations = SCRAM_ITERATIONS,
): Promise<ScramVerifier> {
  const salted = await pbkdf2Async(password, salt, iterations, 32, 'sha256')
  const clientKey = hmac(salted, 'Client Key')
  return {
    salt: salt.toString('base64'),
    iterations,
    storedKey: createHash('sha256').update(clientKey).digest('base64'),
    serverKey: hmac(salted, 'Server Key').toString('base64'),
  }
}

/** Checks a clear-text password against a verifier in constant time. */
export async function verifyScramPassword(
  password: string,
  verifier: ScramVerifier,
): Promise<boolean> {
  const derived = await createScramVerifier(
    password,
    Buffer.from(verifier.salt, 'base64'),
    verifier.iterations,
  )
  const a = Buffer.from(derived.storedKey, 'base64')
  const b = Buffer.from(verifier.storedKey, 'base64')
  return a.length === b.length && timingSafeEqual(a, b)
}

/** Serializes like PostgreSQL's `pg_authid`: `SCRAM-SHA-256$<iter>:<salt>$<StoredKey>:<ServerKey>`. */
export function formatScramVerifier(v: ScramVerifier): string {
  return `SCRAM-SHA-256$${v.iterations}:${v.salt}$${v.storedKey}:${v.serverKey}`
}

/** Parses the stored form; returns null when it is not a SCRAM-SHA-256 verifier. */
export function parseScramVerifier(text: string): ScramVerifier | null {
  const match = /^SCRAM-SHA-256\$(\d+):([^$]+)\$([^:]+):(.+)$/.exec(text)
  if (!match) return null
  const [, iterations, salt, storedKey, serverKey] = match
  if (!iterations || !salt || !storedKey || !serverKey) return null
  return { iterations: Number(iterations), salt, storedKey, serverKey }
}

/**
 * A verifier for a user that does not exist or cannot log in: the salt is derived from the
 * username and a per-store secret, so repeated attempts see the same salt (docs/pgwire.md#connecting),
 * and the keys are random so no password matches.
 */
export function fakeScramVerifier(username: string, secret: Buffer): ScramVerifier {
  const salt = createHmac('sha256', secret).update(`scram-fake-salt:${username}`).digest()
  return {
    salt: salt.subarray(0, 16).toString('base64'),
    iterations: SCRAM_ITERATIONS,
    storedKey: randomBytes(32).toString('base64'),
    serverKey: randomBytes(32).toString('base64'),
  }
}
