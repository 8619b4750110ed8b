/**
 * A bare Node.js TCP relay for bench/proxy: every client connection gets its own upstream
 * connection and bytes are forwarded both ways as they arrive, parsing nothing. It is the floor
 * of any proxy written for this runtime: what Node's sockets and event loop cost per query
 * before a single message is read. Same protocol as proxy-process.ts: prints
 * `{port, rss, cpuMicros}` once listening and again for every line read on stdin.
 */
import { connect, createServer } from 'node:net'
import { createInterface } from 'node:readline'

const upstream = JSON.parse(process.env['BENCH_PROXY_UPSTREAM'] ?? '{}') as {
  host: string
  port: number
}
const server = createServer((client) => {
  client.setNoDelay(true)
  const target = connect(upstream.port, upstream.host)
  target.setNoDelay(true)
  client.on('data', (chunk) => target.write(chunk))
  target.on('data', (chunk) => client.write(chunk))
  client.on('close', () => target.destroy())
  target.on('close', () => client.destroy())
  client.on('error', () => {})
  target.on('error', () => {})
})
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
const address = server.address()
const port = typeof address === 'object' && address ? address.port : 0
const report = () => {
  const { user, system } = process.cpuUsage()
  console.log(JSON.stringify({ port, rss: process.memoryUsage().rss, cpuMicros: user + system }))
}
report()
for await (const _ of createInterface({ input: process.stdin })) report()
server.close()
process.exit(0)
