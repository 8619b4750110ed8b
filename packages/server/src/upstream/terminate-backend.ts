import { serialize } from 'pg-protocol'
import { FrameSplitter } from './frame-splitter.js'
import { connectPostgres } from './postgres-connect.js'
import type { PostgresUpstreamConfig } from './upstream.types.js'

const Z = 'Z'.charCodeAt(0)

/**
 * Ends upstream backend `processId` with `pg_terminate_backend`, from a connection of its own.
 * For a statement that ignored its CancelRequest: closing the session's socket alone leaves it
 * running until it next writes to the client. The pool's user may end its own backends; best
 * effort, bounded by the connect timeout and `waitMs`. Resolves whether it was ended.
 */
export async function terminateBackend(
  config: PostgresUpstreamConfig,
  processId: number,
  waitMs = 5000,
): Promise<boolean> {
  let backend: Awaited<ReturnType<typeof connectPostgres>>
  try {
    backend = await connectPostgres(config)
  } catch {
    return false
  }
  const { socket, reads } = backend
  const splitter = new FrameSplitter()
  try {
    return await new Promise<boolean>((resolve) => {
      let ended = false
      const timer = setTimeout(() => resolve(false), waitMs)
      reads.listen((chunk) => {
        for (const frame of splitter.push(chunk)) {
          // The one row says whether the backend was signalled: 't'.
          if (frame.code === 'D'.charCodeAt(0)) ended = frame.bytes.at(-1) === 't'.charCodeAt(0)
          if (frame.code === Z) {
            clearTimeout(timer)
            resolve(ended)
          }
        }
      })
      socket.once('close', () => {
        clearTimeout(timer)
        resolve(ended)
      })
      socket.on('error', () => {})
      socket.write(serialize.query(`SELECT pg_catalog.pg_terminate_backend(${processId | 0})`))
    })
  } finally {
    socket.end(serialize.end())
  }
}
