import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { createStore } from '../src/index.js'

const SYSTEM = '00000000-0000-0000-0000-000000000000'
const PASSWORD = 'Mask-keys-1'

/** Keyed-hash mask keys (docs/policies.md, "Named masks"): one per datasource, stable per store. */
describe('datasource mask keys', () => {
  it('differ between datasources, stay the same across reopenings, and change with the secret key', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'palisade-mask-keys-'))
    try {
      const keysOf = async (secretKey: string) => {
        const store = await createStore({ dataDir: dir, secretKey })
        try {
          let user = await store.users.findByUsername('ann')
          user ??= await store.users.create({ username: 'ann', password: PASSWORD }, SYSTEM)
          const keys: string[] = []
          for (const name of ['one', 'two']) {
            const found = (await store.datasources.list({ search: name })).data.find(
              (d) => d.name === name,
            )
            const ds =
              found ??
              (await store.datasources.create(
                { name, ds_type: 'pglite', access_mode: 'open', config: {} },
                SYSTEM,
              ))
            await store.access.setAll(ds.id, { enabled: true }, SYSTEM)
            keys.push(
              (await store.sessions.buildSessionInput('ann', name)).datasource.maskKey ?? '',
            )
          }
          expect(user.username).toBe('ann')
          return keys
        } finally {
          await store.close()
        }
      }
      const [one, two] = await keysOf('k'.repeat(32))
      expect(one).toMatch(/^[0-9a-f]{64}$/)
      expect(two).not.toBe(one)
      expect(await keysOf('k'.repeat(32))).toEqual([one, two])
      const other = await keysOf('z'.repeat(32))
      expect(other[0]).not.toBe(one)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
