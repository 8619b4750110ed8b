const HostDate = globalThis.Date

/** The host `Date` with a zero time-zone offset: what the sandbox's C library sees. */
class UtcHostDate extends HostDate {
  override getTimezoneOffset(): number {
    return 0
  }
}

/**
 * Runs `fn` with the sandbox clock in UTC (docs/decision-functions.md#language). The WebAssembly build of QuickJS
 * asks the host's global `Date` for the local time-zone offset, so for the length of this
 * synchronous call that global answers 0; it is restored before anything else can run.
 */
export function withUtcHostClock<T>(fn: () => T): T {
  const previous = globalThis.Date
  globalThis.Date = UtcHostDate as DateConstructor
  try {
    return fn()
  } finally {
    globalThis.Date = previous
  }
}
