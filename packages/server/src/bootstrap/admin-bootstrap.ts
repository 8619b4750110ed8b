import { randomBytes } from 'node:crypto'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { isStoreError, type Store, type User } from '@palisade/store'

/** The actor recorded for changes made before any admin exists (the first admin's creation). */
export const BOOTSTRAP_ACTOR = '00000000-0000-0000-0000-000000000000'

/** The file holding the generated admin JWT secret inside the data directory. */
export const JWT_SECRET_FILE = 'admin-jwt-secret'

/**
 * The admin token secret (docs/admin-api.md#signing-in): the configured one, else `<dataDir>/admin-jwt-secret`
 * (generated with 256 random bits and mode 0600 on first start), else a per-process secret.
 */
export async function resolveJwtSecret(options: {
  configured?: string | undefined
  dataDir?: string | undefined
}): Promise<{ secret: string; source: 'configured' | 'file' | 'ephemeral' }> {
  if (options.configured) return { secret: options.configured, source: 'configured' }
  const fresh = randomBytes(32).toString('base64url')
  if (!options.dataDir) return { secret: fresh, source: 'ephemeral' }
  const path = join(options.dataDir, JWT_SECRET_FILE)
  await mkdir(options.dataDir, { recursive: true })
  try {
    // `wx` fails when the file exists, so two processes starting together keep one secret.
    await writeFile(path, `${fresh}\n`, { mode: 0o600, flag: 'wx' })
    return { secret: fresh, source: 'file' }
  } catch (error) {
    if ((error as { code?: string }).code !== 'EEXIST') throw error
  }
  return { secret: (await readFile(path, 'utf8')).trim(), source: 'file' }
}

/** Whether the store holds at least one active admin. */
export async function hasAdmin(store: Store): Promise<boolean> {
  for (let page = 1; ; page++) {
    const { data, total, page_size } = await store.users.list({ page, page_size: 200 })
    if (data.some((u) => u.is_admin && u.is_active)) return true
    if (page * page_size >= total || data.length === 0) return false
  }
}

/**
 * Creates the first admin when the store has none and credentials are given
 * (`PALISADE_ADMIN_USERNAME` / `PALISADE_ADMIN_PASSWORD`); returns it, or null when nothing
 * was created.
 */
export async function ensureInitialAdmin(
  store: Store,
  credentials: { username: string; password: string } | undefined,
): Promise<User | null> {
  if (!credentials || (await hasAdmin(store))) return null
  try {
    return await store.users.create(
      { username: credentials.username, password: credentials.password, is_admin: true },
      BOOTSTRAP_ACTOR,
    )
  } catch (error) {
    // Instances sharing a store and starting together: another one created the admin first.
    if (isStoreError(error) && error.code === 'already_exists' && (await hasAdmin(store))) {
      return null
    }
    throw error
  }
}
