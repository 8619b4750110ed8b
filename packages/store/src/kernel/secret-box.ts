import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto'
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

const KEY_FILE = 'secret.key'

/** Seals and opens small secrets (datasource passwords) with AES-256-GCM. */
export class SecretBox {
  readonly #key: Buffer

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('secret key must be 32 bytes')
    this.#key = key
  }

  /** Encrypts to `v1:<iv>:<tag>:<ciphertext>` (base64 parts); a fresh 96-bit IV each time. */
  seal(plain: string): string {
    const iv = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', this.#key, iv)
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()])
    const tag = cipher.getAuthTag()
    return ['v1', iv.toString('base64'), tag.toString('base64'), body.toString('base64')].join(':')
  }

  /** Decrypts a sealed value; throws when the key is wrong or the value was tampered with. */
  open(sealed: string): string {
    const [version, iv, tag, body] = sealed.split(':')
    if (version !== 'v1' || !iv || !tag || body === undefined) {
      throw new Error('unrecognized sealed secret')
    }
    const decipher = createDecipheriv('aes-256-gcm', this.#key, Buffer.from(iv, 'base64'))
    decipher.setAuthTag(Buffer.from(tag, 'base64'))
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]).toString(
      'utf8',
    )
  }

  /** A key derived for another purpose (e.g. fake SCRAM salts), never the sealing key itself. */
  derive(purpose: string): Buffer {
    return createHash('sha256').update(this.#key).update(purpose).digest()
  }
}

/**
 * Turns configured key text into 32 bytes: 64 hex characters or base64 of 32 bytes are used
 * as is; any other text is hashed with SHA-256 so a passphrase works too.
 */
export function parseSecretKey(text: string): Buffer {
  const trimmed = text.trim()
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return Buffer.from(trimmed, 'hex')
  const b64 = Buffer.from(trimmed, 'base64')
  if (b64.length === 32 && /^[A-Za-z0-9+/]+=*$/.test(trimmed)) return b64
  return createHash('sha256').update(trimmed, 'utf8').digest()
}

/**
 * Resolves the sealing key: explicit option, then `PALISADE_SECRET_KEY` or
 * `PALISADE_ENCRYPTION_KEY`, then `<dataDir>/secret.key` (created with mode 0600 on first
 * start). Without any of these the key is random and lives only as long as the process.
 */
export async function loadSecretKey(options: {
  secretKey?: string | undefined
  dataDir?: string | undefined
}): Promise<{ key: Buffer; source: 'option' | 'env' | 'file' | 'ephemeral' }> {
  if (options.secretKey) return { key: parseSecretKey(options.secretKey), source: 'option' }
  const env = process.env['PALISADE_SECRET_KEY'] ?? process.env['PALISADE_ENCRYPTION_KEY']
  if (env) return { key: parseSecretKey(env), source: 'env' }
  if (!options.dataDir) return { key: randomBytes(32), source: 'ephemeral' }
  const path = join(options.dataDir, KEY_FILE)
  try {
    return { key: parseSecretKey(await readFile(path, 'utf8')), source: 'file' }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  await mkdir(options.dataDir, { recursive: true })
  const key = randomBytes(32)
  // `wx` fails if another process created the file meanwhile; then read theirs.
  try {
    await writeFile(path, `${key.toString('hex')}\n`, { mode: 0o600, flag: 'wx' })
    await chmod(path, 0o600)
    return { key, source: 'file' }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
    return { key: parseSecretKey(await readFile(path, 'utf8')), source: 'file' }
  }
}
