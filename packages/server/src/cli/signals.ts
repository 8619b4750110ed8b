import type { Logger } from '../logging/logger.js'

/**
 * Runs `close` on the first SIGINT or SIGTERM, then exits 0 (1 when closing failed); a second
 * signal exits at once.
 */
export function closeOnSignals(close: () => Promise<void>, logger: Logger): void {
  let stopping = false
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1)
    stopping = true
    logger.info({ event: 'signal', signal }, 'shutting down')
    close().then(
      () => process.exit(0),
      () => process.exit(1),
    )
  }
  process.on('SIGINT', stop)
  process.on('SIGTERM', stop)
}
