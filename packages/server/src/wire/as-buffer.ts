/**
 * The bytes as a Buffer, without a copy. Most bytes here already are Buffers; wrapping them
 * again would read `.buffer`, which makes V8 materialize the backing store of small arrays.
 */
export function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes)
    ? bytes
    : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}
