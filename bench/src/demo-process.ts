/**
 * The demo server (both planes, embedded PGlite store and upstream) alone in its process, as
 * deployed, for bench/logins. Prints `{dataPort, adminUrl, database, user, password}` once
 * listening and exits when stdin closes. `BENCH_LOGIN_THROTTLE=off` turns the failed-login
 * throttle off, so that every wrong password is checked.
 */
import { createLogger, startDemo } from '../../packages/server/dist/index.js'

const demo = await startDemo({
  dataPort: 0,
  adminPort: 0,
  logger: createLogger({ level: 'silent' }),
  ...(process.env['BENCH_LOGIN_THROTTLE'] === 'off'
    ? { loginThrottle: { addressFailures: 0, accountFailures: 0 } }
    : {}),
})
const user = demo.users[0]
console.log(
  JSON.stringify({
    dataPort: demo.server.dataPlane.port,
    adminUrl: demo.server.admin.url,
    database: demo.database,
    user: user?.username,
    password: user?.password,
  }),
)
process.stdin.resume()
process.stdin.on('end', async () => {
  await demo.close()
  process.exit(0)
})
