import * as crypto from 'node:crypto'
import { createHash, randomFillSync } from 'node:crypto'

let lastMs = 0
let seq = 0

/**
 * Random bytes drawn 4 KiB at a time: one system call per 256 ids instead of one per id (the
 * query audit makes an id per statement; a call each cost more than the rest of the row).
 */
const pool = Buffer.alloc(4096)
let poolAt = pool.length

function randomId(): Buffer {
  if (poolAt + 16 > pool.length) {
    randomFillSync(pool)
    poolAt = 0
  }
  poolAt += 16
  return Buffer.from(pool.subarray(poolAt - 16, poolAt))
}

function format(bytes: Uint8Array): string {
  const hex = Buffer.from(bytes).toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/** A new UUIDv7 (RFC 9562): time-ordered, so ids sort by creation within one process. */
export function uuidv7(): string {
  const bytes = randomId()
  let ms = Date.now()
  // A 12-bit counter in rand_a keeps ids monotonic when several are made in one millisecond.
  if (ms <= lastMs) {
    ms = lastMs
    seq++
    if (seq > 0xfff) {
      ms = ++lastMs
      seq = 0
    }
  } else {
    seq = 0
  }
  lastMs = ms
  bytes.writeUIntBE(ms, 0, 6)
  bytes[6] = 0x70 | ((seq >> 8) & 0x0f)
  bytes[7] = seq & 0xff
  bytes[8] = 0x80 | ((bytes[8] ?? 0) & 0x3f)
  return format(bytes)
}

/** Namespace UUIDs as bytes: a catalog save derives 100,000 ids in one datasource's namespace. */
const namespaceBytes = new Map<string, Buffer>()

/** A name-based UUIDv5 (RFC 9562) of `name` in the `namespace` UUID. */
export function uuidv5(namespace: string, name: string): string {
  let ns = namespaceBytes.get(namespace)
  if (!ns) {
    if (namespaceBytes.size >= 64) namespaceBytes.clear()
    ns = Buffer.from(namespace.replace(/-/g, ''), 'hex')
    namespaceBytes.set(namespace, ns)
  }
  const bytes = sha1(Buffer.concat([ns, Buffer.from(name, 'utf8')])).subarray(0, 16)
  bytes[6] = 0x50 | ((bytes[6] ?? 0) & 0x0f)
  bytes[8] = 0x80 | ((bytes[8] ?? 0) & 0x3f)
  return format(bytes)
}

/** One-shot hashing where Node has it (20.12+), about twice as fast as a Hash object. */
const oneShot = (
  crypto as { hash?: (algorithm: string, data: Buffer, encoding: 'buffer') => Buffer }
).hash
const sha1 = (data: Buffer): Buffer =>
  oneShot ? oneShot('sha1', data, 'buffer') : createHash('sha1').update(data).digest()

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** True for a lowercase hyphenated UUID string (docs/resources.md#values). */
export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && uuidPattern.test(value)
}
