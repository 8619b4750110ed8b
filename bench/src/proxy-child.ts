/** Starts bench/proxy's proxy (or the bare relay beside it) in its own process and talks to it. */
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'

/**
 * A proxy in its own process: its port, its RSS and CPU time on demand, and a stop. `script` is
 * proxy-process.ts (Palisade) or node-relay-process.ts (the bare relay).
 */
export async function startProxyProcess(
  upstream: Record<string, unknown>,
  script = 'proxy-process.ts',
) {
  const child = spawn(
    process.execPath,
    [
      '--expose-gc',
      ...(process.env['BENCH_PROXY_NODE_ARGS']?.split(' ').filter(Boolean) ?? []),
      '--import',
      'tsx',
      new URL(`./${script}`, import.meta.url).pathname,
    ],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
      env: { ...process.env, BENCH_PROXY_UPSTREAM: JSON.stringify(upstream) },
    },
  )
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]()
  const next = async () =>
    JSON.parse(String((await lines.next()).value)) as {
      port: number
      rss: number
      cpuMicros: number
    }
  const { port } = await next()
  return {
    port,
    async rss() {
      child.stdin.write('rss\n')
      return (await next()).rss
    },
    /** The proxy process's RSS now, without waiting for memory to settle. */
    async currentRss() {
      child.stdin.write('cpu\n')
      return (await next()).rss
    },
    /** The proxy process's CPU time so far (user + system), in microseconds. */
    async cpuMicros() {
      child.stdin.write('cpu\n')
      return (await next()).cpuMicros
    },
    /** Ends the proxy process (closing stdin lets it exit normally), killing it if it hangs. */
    async stop() {
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
      child.stdin.end()
      const timer = setTimeout(() => child.kill(), 5000)
      await exited
      clearTimeout(timer)
    },
  }
}
