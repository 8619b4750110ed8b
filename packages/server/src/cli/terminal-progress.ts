/**
 * Progress for long CLI operations, on a terminal only: a log file or a pipe gets no carriage
 * returns. `ticker` shows the time a server-side operation has taken while the CLI waits.
 */
export function isInteractive(env: NodeJS.ProcessEnv): boolean {
  return process.stderr.isTTY === true && env['CI'] === undefined
}

/** Runs `fn` while `label… N s` counts up on the terminal. */
export async function withTicker<T>(
  label: string,
  env: NodeJS.ProcessEnv,
  fn: () => Promise<T>,
): Promise<T> {
  if (!isInteractive(env)) return fn()
  const started = Date.now()
  const timer = setInterval(() => {
    process.stderr.write(`\r${label}… ${Math.round((Date.now() - started) / 1000)} s`)
  }, 1000)
  try {
    return await fn()
  } finally {
    clearInterval(timer)
    process.stderr.write('\n')
  }
}
