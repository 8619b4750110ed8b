import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createStore } from '@palisade/store'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { main } from '../../src/cli/main.js'

const SYSTEM_ACTOR = '00000000-0000-0000-0000-000000000000'

describe('palisade audit verify --data-dir', () => {
  let dir: string

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'palisade-verify-'))
    const store = await createStore({ dataDir: dir })
    for (const username of ['ann', 'ben', 'cyd']) {
      await store.users.create({ username, password: 'Passw0rd-Passw0rd' }, SYSTEM_ACTOR)
    }
    await store.close()
  })
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true })
  })

  /** Runs the command and returns its exit code and what it printed. */
  async function verify(): Promise<{ code: number; text: string }> {
    const printed: string[] = []
    const spy = vi.spyOn(console, 'log').mockImplementation((line: unknown) => {
      printed.push(String(line))
    })
    try {
      const code = await main(['audit', 'verify', '--data-dir', dir], {})
      return { code, text: printed.join('\n') }
    } finally {
      spy.mockRestore()
    }
  }

  it('reads the store itself and finds the chain whole', async () => {
    const { code, text } = await verify()
    expect(code).toBe(0)
    expect(text).toContain('admin audit: 3 entries in 1 chain')
    expect(text).toContain('OK: every chain holds')
  })

  it('names the entry changed behind Palisade, and exits 4', async () => {
    const store = await createStore({ dataDir: dir })
    try {
      await store.db.execute('ALTER TABLE admin_audit_log DISABLE TRIGGER USER')
      await store.db.execute(
        `UPDATE admin_audit_log SET changes = replace(changes, 'ben', 'bob') WHERE chain_seq = 2`,
      )
      await store.db.execute('ALTER TABLE admin_audit_log ENABLE TRIGGER USER')
    } finally {
      await store.close()
    }
    const { code, text } = await verify()
    expect(code).toBe(4)
    expect(text).toMatch(
      /BROKEN: admin audit, chain [0-9a-f-]+, entry 2 \(id [0-9a-f-]+\): entry content does not match its hash/,
    )
  })
})
