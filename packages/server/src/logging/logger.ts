import { type Logger, pino } from 'pino'

/** Log levels accepted by `--log-level` / `PALISADE_LOG_LEVEL`. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const

/** One of {@link LOG_LEVELS}. */
export type LogLevel = (typeof LOG_LEVELS)[number]

/** Whether a string names a log level. */
export function isLogLevel(value: string): value is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(value)
}

/**
 * Keys that are never written, wherever they appear one or two levels deep: credentials, tokens
 * and SQL parameters. The log lines below never carry them; this is the safety net.
 */
const REDACT = [
  'password',
  'token',
  'secret',
  'authorization',
  'params',
  'parameters',
  '*.password',
  '*.token',
  '*.secret',
  '*.authorization',
  '*.params',
  '*.parameters',
]

/**
 * The operator log: JSON lines (pino) on stdout, or on `destination` when given (tests).
 *
 * ```ts
 * const log = createLogger({ level: 'info' })
 * log.info({ event: 'started' }, 'palisade started')
 * ```
 */
export function createLogger(
  options: { level?: LogLevel; destination?: NodeJS.WritableStream } = {},
): Logger {
  const settings = {
    level: options.level ?? 'info',
    base: { service: 'palisade' },
    redact: { paths: REDACT, censor: '[redacted]' },
    timestamp: pino.stdTimeFunctions.isoTime,
  }
  return options.destination ? pino(settings, options.destination) : pino(settings)
}

export type { Logger } from 'pino'
