import { createHash, createHmac } from 'node:crypto'
import { mkdtemp, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import {
  createScramVerifier,
  createStore,
  formatScramVerifier,
  parseScramVerifier,
  verifyScramPassword,
} from '../src/index.js'
import { ChangeFeed, encodeChangePayload } from '../src/kernel/change-feed.js'
import { uuidv5, uuidv7 } from '../src/kernel/ids.js'
import { loadSecretKey, parseSecretKey, SecretBox } from '../src/kernel/secret-box.js'

const xor = (a: Buffer, b: Buffer) => Buffer.from(a.map((byte, i) => byte ^ (b[i] ?? 0)))

describe('SCRAM-SHA-256 verifiers', () => {
  it('completes the RFC 7677 example exchange with a verifier derived from its password', async () => {
    const verifier = await createScramVerifier(
      'pencil',
      Buffer.from('W22ZaJ0SNY7soEsUEjb6gQ==', 'base64'),
      4096,
    )
    const authMessage = [
      'n=user,r=rOprNGfwEbeRWgbNEkqO',
      'r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096',
      'c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0',
    ].join(',')
    const storedKey = Buffer.from(verifier.storedKey, 'base64')
    const clientSignature = createHmac('sha256', storedKey).update(authMessage).digest()
    const proof = Buffer.from('dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=', 'base64')
    const clientKey = xor(proof, clientSignature)
    expect(createHash('sha256').update(clientKey).digest().equals(storedKey)).toBe(true)
    const serverSignature = createHmac('sha256', Buffer.from(verifier.serverKey, 'base64'))
      .update(authMessage)
      .digest()
    expect(serverSignature.toString('base64')).toBe('6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=')
  })

  it('uses a random salt and round-trips the PostgreSQL text form', async () => {
    const a = await createScramVerifier('Secret-123')
    const b = await createScramVerifier('Secret-123')
    expect(a.salt).not.toBe(b.salt)
    expect(parseScramVerifier(formatScramVerifier(a))).toEqual(a)
    expect(formatScramVerifier(a)).toMatch(/^SCRAM-SHA-256\$4096:/)
    expect(await verifyScramPassword('Secret-123', a)).toBe(true)
    expect(await verifyScramPassword('Secret-124', a)).toBe(false)
    expect(parseScramVerifier('md5abc')).toBeNull()
  })
})

describe('secret box', () => {
  it('seals with a fresh IV each time and rejects tampering or a wrong key', () => {
    const box = new SecretBox(parseSecretKey('a passphrase'))
    const sealed = box.seal('pw')
    expect(box.seal('pw')).not.toBe(sealed)
    expect(box.open(sealed)).toBe('pw')
    const parts = sealed.split(':')
    const tampered = [...parts.slice(0, 3), Buffer.from('xx').toString('base64')].join(':')
    expect(() => box.open(tampered)).toThrow()
    expect(() => new SecretBox(parseSecretKey('other')).open(sealed)).toThrow()
    expect(parseSecretKey('ab'.repeat(32))).toHaveLength(32)
  })
})

describe('ids', () => {
  it('makes time-ordered UUIDv7 and stable UUIDv5 values', () => {
    const ids = Array.from({ length: 1000 }, () => uuidv7())
    expect([...ids].sort()).toEqual(ids)
    expect(ids[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    // RFC 9562 appendix: the DNS namespace and "www.example.com".
    expect(uuidv5('6ba7b810-9dad-11d1-80b4-00c04fd430c8', 'www.example.com')).toBe(
      '2ed6657d-e927-568b-95e1-2665a8aea6a2',
    )
  })
})

describe('change feed payloads', () => {
  it('keeps payloads small by coarsening long id lists and ignores its own echoes', () => {
    const ids = Array.from({ length: 500 }, () => uuidv7())
    const payload = encodeChangePayload('me', [
      { type: 'ds_users', datasourceId: 'd', userIds: ids },
    ])
    expect(payload.length).toBeLessThan(8000)
    const other = new ChangeFeed('other')
    const seen: unknown[] = []
    other.subscribe((n) => seen.push(n))
    other.receive(payload)
    other.receive(encodeChangePayload('other', [{ type: 'everyone' }]))
    other.receive('not json')
    expect(seen).toEqual([
      { type: 'ds', datasourceId: 'd', origin: 'remote' },
      { type: 'everyone', origin: 'remote' },
    ])
  })
})

describe('secret key resolution', () => {
  it('generates a key file with mode 0600 once and reuses it', async () => {
    if (process.env['PALISADE_SECRET_KEY'] || process.env['PALISADE_ENCRYPTION_KEY']) return
    const dir = await mkdtemp(join(tmpdir(), 'palisade-key-'))
    try {
      const first = await loadSecretKey({ dataDir: dir })
      const second = await loadSecretKey({ dataDir: dir })
      expect(first.source).toBe('file')
      expect(second.key.equals(first.key)).toBe(true)
      expect((await stat(join(dir, 'secret.key'))).mode & 0o777).toBe(0o600)
      expect((await loadSecretKey({ dataDir: dir, secretKey: 'explicit' })).source).toBe('option')
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })

  it('refuses PostgreSQL without a configured key', async () => {
    if (process.env['PALISADE_SECRET_KEY'] || process.env['PALISADE_ENCRYPTION_KEY']) return
    await expect(createStore({ databaseUrl: 'postgresql://127.0.0.1:1/none' })).rejects.toThrow(
      'a secret key is required',
    )
  })
})
